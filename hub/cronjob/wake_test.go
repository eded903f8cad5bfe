package cronjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestNextPass(t *testing.T) {
	slot := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		{"the slot is ahead: wait until it", slot.Add(-42 * time.Second), 42 * time.Second},
		{"a pass that ends a millisecond before the slot waits that millisecond", slot.Add(-time.Millisecond), time.Millisecond},
		{"a pass that ends at the slot comes back at once, not never", slot, soonest},
		{"a pass that ends after the slot comes back at once", slot.Add(300 * time.Millisecond), soonest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := ctrl.Result{RequeueAfter: tc.want, Priority: ptr.To(slotPriority)}
			if diff := cmp.Diff(want, nextPass(slot, tc.now)); diff != "" {
				t.Errorf("nextPass (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlotsGoAheadOfBookkeeping(t *testing.T) {
	slot, record := nextPass(time.Now().Add(time.Minute), time.Now()), afterCreate()
	if *slot.Priority <= *record.Priority {
		t.Errorf("a slot's pass has priority %d, the recording of a created run %d: the slot must go first", *slot.Priority, *record.Priority)
	}
	if record.RequeueAfter != recordRetry {
		t.Errorf("the recording of a created run comes back after %v, want %v", record.RequeueAfter, recordRetry)
	}
}
