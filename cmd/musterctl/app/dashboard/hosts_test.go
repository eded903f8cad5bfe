package dashboard

import "testing"

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8420":       true,
		"localhost:8420":       true,
		"[::1]:8420":           true,
		"127.0.0.1":            true,
		"localhost":            true,
		"127.1.2.3:80":         true,
		"evil.example:8420":    false,
		"localhost.evil:8420":  false,
		"192.168.1.10:8420":    false,
		"":                     false,
		"[::ffff:10.0.0.1]:80": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
