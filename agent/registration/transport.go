package registration

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"
)

// CertHolder serves the agent's current client certificate to every hub connection and
// drops those connections when the certificate is replaced, so that requests never run
// on a connection authenticated with a certificate that is about to expire.
type CertHolder struct {
	cert   atomic.Pointer[tls.Certificate]
	dialer *connrotation.Dialer
}

// NewCertHolder holds cert.
func NewCertHolder(cert *tls.Certificate) *CertHolder {
	h := &CertHolder{dialer: connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)}
	h.cert.Store(cert)
	return h
}

// Current returns the certificate in use.
func (h *CertHolder) Current() *tls.Certificate { return h.cert.Load() }

// Replace swaps in a new certificate and closes every open hub connection; clients
// reconnect, and watches re-establish, with the new one.
func (h *CertHolder) Replace(cert *tls.Certificate) {
	h.cert.Store(cert)
	h.dialer.CloseAll()
}

// HubConfig is a rest.Config for the hub that authenticates with the holder's current
// certificate.
func HubConfig(hubURL string, caPEM []byte, holder *CertHolder) (*rest.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("the hub CA bundle holds no certificate")
	}
	tlsConfig := &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    pool,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return holder.Current(), nil
		},
	}
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsConfig,
		DialContext:         holder.dialer.DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 25,
	}
	return &rest.Config{Host: hubURL, Transport: transport, QPS: 50, Burst: 100}, nil
}

// BootstrapConfig is a rest.Config for the hub that authenticates with a bootstrap token.
func BootstrapConfig(b *Bootstrap) *rest.Config {
	return &rest.Config{Host: b.HubURL, BearerToken: b.Token, TLSClientConfig: rest.TLSClientConfig{CAData: b.CA}}
}
