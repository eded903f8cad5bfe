package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/musterhq/muster/hub/webhook"
)

// muxServer is a webhook.Server that only registers handlers, for an HTTP server of the
// test's to serve.
type muxServer struct{ mux *http.ServeMux }

func (s muxServer) NeedLeaderElection() bool                { return false }
func (s muxServer) Register(path string, hook http.Handler) { s.mux.Handle(path, hook) }
func (s muxServer) Start(context.Context) error             { return nil }
func (s muxServer) StartedChecker() healthz.Checker         { return healthz.Ping }
func (s muxServer) WebhookMux() *http.ServeMux              { return s.mux }

// A draining server keeps answering, and each answer makes the client close the
// connection it came on, so that its next call opens a new one (through the Service, to
// a replica that stays) rather than racing the server's close of an idle one.
func TestADrainingServerClosesEachConnectionAfterItsAnswer(t *testing.T) {
	mux := http.NewServeMux()
	server := webhook.NewDrainingServer(muxServer{mux})
	server.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "allowed") }))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	call := func() *http.Response {
		t.Helper()
		resp, err := ts.Client().Post(ts.URL+"/validate", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); string(body) != "allowed" {
			t.Fatalf("answer %q, want the hook's", body)
		}
		return resp
	}
	if resp := call(); resp.Close {
		t.Error("a serving replica closed the connection: keep-alive is for a replica that stays")
	}
	server.Drain()
	// resp.Close: the answer said "Connection: close", and the client will not reuse it.
	if resp := call(); !resp.Close {
		t.Error("a draining replica's answer keeps the connection open for the next call")
	}
}
