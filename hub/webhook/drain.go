package webhook

import (
	"net/http"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// DrainingServer is the webhook server of a replica behind the Service: once Drain is
// called (the replica is stopping), every answer tells the API server to close its
// connection after reading it.
//
// The API server calls webhooks over HTTP/1.1 and keeps connections open between calls;
// a connection stays with the replica it reached after the Service has dropped that
// replica. A server that closes an idle connection at shutdown races a call the API
// server is just sending on it, which fails ("EOF": not retried, and the write is
// refused). Closing each connection in-band, after an answer that says so, leaves the API
// server nothing to race: its next call opens a new connection, which the Service sends
// to a replica that stays.
type DrainingServer struct {
	webhook.Server
	draining atomic.Bool
}

// NewDrainingServer wraps server.
func NewDrainingServer(server webhook.Server) *DrainingServer {
	return &DrainingServer{Server: server}
}

// Register registers hook at path, answering with "Connection: close" once draining.
func (s *DrainingServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		hook.ServeHTTP(w, r)
	}))
}

// Drain makes every later answer close its connection.
func (s *DrainingServer) Drain() { s.draining.Store(true) }
