package dashboard

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The page colours a phase or health by its meaning: done, broken, running, waiting.
func TestStateColoursEachPhase(t *testing.T) {
	for in, want := range map[string]string{
		"Complete": "ok", "Completed": "ok", "Available": "ok",
		"Failed": "bad", "Unavailable": "bad",
		"Running": "run",
		"Pending": "wait", "Paused": "wait", "Unknown": "wait", "": "wait",
	} {
		if got := state(in); got != want {
			t.Errorf("state(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStampIsUTC(t *testing.T) {
	local := time.Date(2026, 11, 23, 13, 0, 0, 0, time.FixedZone("CET", 3600))
	if got := stamp(&local); got != "2026-11-23T12:00:00Z" {
		t.Errorf("stamp = %q", got)
	}
	if got := stamp(nil); got != "" {
		t.Errorf("stamp(nil) = %q, want empty", got)
	}
}

func TestKeyJoinsParts(t *testing.T) {
	key := funcs["key"].(func(...string) string)
	if got := key("batch", "render", "eu-1"); got != "batch/render/eu-1" {
		t.Errorf("key = %q", got)
	}
}

// The host check applies to what the browser asked for, whatever the listener.
func TestLoopbackOnlyRefusesOtherHosts(t *testing.T) {
	served := 0
	h := loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++ }))
	for host, want := range map[string]int{
		"127.0.0.1:8420":     http.StatusOK,
		"localhost":          http.StatusOK,
		"[::1]:8420":         http.StatusOK,
		"rebound.example":    http.StatusForbidden,
		"10.0.0.1:8420":      http.StatusForbidden,
		"127.0.0.1.nip.io:1": http.StatusForbidden,
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		before := served
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: status %d, want %d", host, rec.Code, want)
		}
		if passed := served > before; passed != (want == http.StatusOK) {
			t.Errorf("Host %s: reached the page %t", host, passed)
		}
		if want == http.StatusForbidden && !strings.Contains(rec.Body.String(), "only requests to localhost, 127.0.0.1 or [::1]") {
			t.Errorf("Host %s: refusal says %q", host, rec.Body.String())
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8420}, true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8420}, true},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8420}, false}, // every interface
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 2), Port: 8420}, false},
		{&net.UnixAddr{Name: "/tmp/dash.sock", Net: "unix"}, false},
	} {
		if got := isLoopback(tc.addr); got != tc.want {
			t.Errorf("isLoopback(%v) = %t, want %t", tc.addr, got, tc.want)
		}
	}
}

// A burst of changes wakes each subscriber once; an ended subscription is woken no more.
func TestChangesWakeEachSubscriberOncePerBurst(t *testing.T) {
	c := newChanges()
	a, endA := c.subscribe()
	b, endB := c.subscribe()
	defer endB()
	for range 5 {
		c.notify()
	}
	for name, ch := range map[string]<-chan struct{}{"a": a, "b": b} {
		if n := drain(ch); n != 1 {
			t.Errorf("subscriber %s got %d signals for one burst, want 1", name, n)
		}
	}
	endA()
	c.notify()
	if n := drain(a); n != 0 {
		t.Errorf("an ended subscription got %d signals", n)
	}
	if n := drain(b); n != 1 {
		t.Errorf("the remaining subscriber got %d signals, want 1", n)
	}
}

// drain counts the signals waiting on ch.
func drain(ch <-chan struct{}) int {
	n := 0
	for {
		select {
		case <-ch:
			n++
		default:
			return n
		}
	}
}
