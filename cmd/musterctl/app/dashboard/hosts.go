package dashboard

import (
	"net"
	"net/http"
)

// loopbackOnly refuses requests that do not name the loopback host they reached. A page
// served on 127.0.0.1 carries the user's view of the hub; without this check any web site
// could read it by pointing a name of its own at 127.0.0.1 (DNS rebinding), the reason
// kubectl proxy accepts only localhost hosts by default.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "the dashboard answers only requests to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost says whether a Host header, with or without a port, names this machine's
// loopback interface.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// isLoopback says whether a listener's address is on the loopback interface.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
