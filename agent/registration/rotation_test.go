package registration

import (
	"crypto/x509"
	"testing"
	"time"
)

func TestRotationDeadline(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		lifetime time.Duration
		want     time.Duration // after NotBefore
	}{
		{name: "one day", lifetime: 24 * time.Hour, want: 19*time.Hour + 12*time.Minute},
		{name: "ten minutes", lifetime: 10 * time.Minute, want: 8 * time.Minute},
		{name: "ninety seconds", lifetime: 90 * time.Second, want: 72 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cert := &x509.Certificate{NotBefore: start, NotAfter: start.Add(tc.lifetime)}
			if got := RotationDeadline(cert, time.Time{}); !got.Equal(start.Add(tc.want)) {
				t.Errorf("RotationDeadline() = %s after NotBefore, want %s", got.Sub(start), tc.want)
			}
		})
	}
}

func TestUsable(t *testing.T) {
	start := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	cert := &x509.Certificate{NotBefore: start, NotAfter: start.Add(100 * time.Minute)}
	cases := []struct {
		at   time.Duration
		want bool
	}{
		{at: -time.Minute, want: false},
		{at: time.Minute, want: true},
		{at: 79 * time.Minute, want: true},
		{at: 81 * time.Minute, want: true}, // due for renewal, which needs it
		{at: 101 * time.Minute, want: false},
	}
	for _, tc := range cases {
		if got := usable(cert, start.Add(tc.at)); got != tc.want {
			t.Errorf("usable at %s = %v, want %v", tc.at, got, tc.want)
		}
	}
}

// kube-controller-manager backdates NotBefore by five minutes; a 60s certificate must still
// be renewed 48s after it was issued, not at once.
func TestRotationDeadlineOfBackdatedCertificate(t *testing.T) {
	issued := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cert := &x509.Certificate{NotBefore: issued.Add(-5 * time.Minute), NotAfter: issued.Add(time.Minute)}
	if got, want := RotationDeadline(cert, issued), issued.Add(48*time.Second); !got.Equal(want) {
		t.Errorf("RotationDeadline() = %s after issue, want 48s", got.Sub(issued))
	}
	// Without the issue time the backdate makes it due at once: the loop this guards against.
	if due := RotationDeadline(cert, time.Time{}); due.After(issued) {
		t.Errorf("the NotBefore fallback makes the certificate due %s after issue, want at once", due.Sub(issued))
	}
}
