package cronjob

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestNamedFor(t *testing.T) {
	cj := &musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "u1"}}
	slot := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		run  string
		want bool
	}{
		{"the slot's name", "nightly-29928060", true},
		{"the slot's alternate name", AlternateChildName(cj, slot), true},
		{"another slot's name", "nightly-29928061", false},
		{"another slot's alternate name", AlternateChildName(cj, slot.Add(time.Minute)), false},
		{"another cron's alternate name", AlternateChildName(&musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "u2"}}, slot), false},
		{"a name of the user's", "nightly", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NamedFor(cj, tc.run, slot); got != tc.want {
				t.Errorf("NamedFor(%q, %v) = %v, want %v", tc.run, slot, got, tc.want)
			}
		})
	}
}
