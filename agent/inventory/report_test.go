package inventory

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestNeedsReport(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-ago)} }
	status := func(version string, reported *metav1.Time) *musterv1.MemberClusterStatus {
		return &musterv1.MemberClusterStatus{Version: version, LastInventoryReportTime: reported}
	}
	for _, tc := range []struct {
		name       string
		have, want *musterv1.MemberClusterStatus
		report     bool
	}{
		{"first report", status("", nil), status("v1.36.3", nil), true},
		{"never stamped, nothing changed", status("v1.36.3", nil), status("v1.36.3", nil), true},
		{"unchanged, stamped a minute ago", status("v1.36.3", at(time.Minute)), status("v1.36.3", at(time.Minute)), false},
		{"changed, stamped a second ago", status("v1.36.2", at(time.Second)), status("v1.36.3", at(time.Second)), true},
		{"unchanged, stamped half a resync ago: the resync refreshes it", status("v1.36.3", at(Resync/2)), status("v1.36.3", at(Resync/2)), true},
		{"unchanged, stamped a resync ago", status("v1.36.3", at(Resync)), status("v1.36.3", at(Resync)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NeedsReport(tc.have, tc.want, now); got != tc.report {
				t.Errorf("NeedsReport = %v, want %v", got, tc.report)
			}
		})
	}
}
