package patch_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clocktesting "k8s.io/utils/clock/testing"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

func invalid(msg string) error {
	return fmt.Errorf("updating status: %w", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "job",
		field.ErrorList{field.Required(field.NewPath("status", "startTime"), msg)}))
}

// An object whose write is refused as invalid waits 1 s, then 2 s, 4 s... before the next
// write goes, whatever brings it back meanwhile; an accepted write, or a new generation
// (the user changed the spec), ends the wait.
func TestRefusalsPaceAnObjectsWrites(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	r := &patch.Refusals{Clock: clock}
	obj := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a", Generation: 1}}
	other := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "uid-b", Generation: 1}}

	refuse := func(wantWait time.Duration) {
		t.Helper()
		if err := r.Check(obj); err != nil {
			t.Fatalf("write held back when due: %v", err)
		}
		err := r.Observe(t.Context(), nil, obj, invalid("startTime is required"))
		wait, ok := patch.Refused(err)
		if !ok || wait != wantWait || !apierrors.IsInvalid(err) {
			t.Fatalf("refusal: got %v (wait %v), want a RefusedError with wait %v still Invalid", err, wait, wantWait)
		}
		res, rerr := patch.Requeue(err)
		if rerr != nil || res.RequeueAfter != wantWait {
			t.Fatalf("Requeue: %+v, %v; want a requeue after %v and no error", res, rerr, wantWait)
		}
		clock.SetTime(clock.Now().Add(wantWait / 2))
		if wait, ok := patch.Refused(r.Check(obj)); !ok || wait != wantWait/2 {
			t.Fatalf("halfway through the backoff: wait %v held %v, want %v", wait, ok, wantWait/2)
		}
		clock.SetTime(clock.Now().Add(wantWait / 2))
	}
	refuse(time.Second)
	refuse(2 * time.Second)
	refuse(4 * time.Second)
	if err := r.Check(other); err != nil {
		t.Errorf("another object's write held back: %v", err)
	}

	// A new generation writes at once.
	if err := r.Observe(t.Context(), nil, obj, invalid("startTime is required")); err == nil {
		t.Fatal("refusal not reported")
	}
	obj.Generation = 2
	if err := r.Check(obj); err != nil {
		t.Errorf("new generation held back: %v", err)
	}
	// An accepted write forgets the series: the next refusal waits 1 s again.
	if err := r.Observe(t.Context(), nil, obj, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := patch.Refused(r.Check(obj)); ok {
		t.Error("held back after an accepted write")
	}
	if wait, _ := patch.Refused(r.Observe(t.Context(), nil, obj, invalid("x"))); wait != time.Second {
		t.Errorf("after an accepted write the backoff restarts at 1s, got %v", wait)
	}
}

func TestRefusalsLongestWait(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	r := &patch.Refusals{Clock: clock}
	obj := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a"}}
	var wait time.Duration
	for range 30 {
		wait, _ = patch.Refused(r.Observe(t.Context(), nil, obj, invalid("x")))
		clock.SetTime(clock.Now().Add(wait))
	}
	if wait != 5*time.Minute {
		t.Errorf("wait after 30 refusals %v, want the 5m cap", wait)
	}
}

// Only a refusal as invalid is paced: other errors are the caller's as before.
func TestRefusalsLeaveOtherErrors(t *testing.T) {
	r := &patch.Refusals{}
	obj := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "uid-a"}}
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "jobs"}, "a", errors.New("changed"))
	if err := r.Observe(t.Context(), nil, obj, conflict); !errors.Is(err, conflict) {
		t.Errorf("conflict came back as %v", err)
	}
	if err := r.Check(obj); err != nil {
		t.Errorf("a conflict held the next write back: %v", err)
	}
	var none *patch.Refusals
	if err := none.Observe(t.Context(), nil, obj, invalid("x")); !apierrors.IsInvalid(err) {
		t.Errorf("a nil Refusals changed the error: %v", err)
	}
	if _, ok := patch.Refused(invalid("x")); ok {
		t.Error("a bare Invalid error taken for a paced refusal")
	}
}

// Refusals of objects deleted during their backoff are not kept forever: once an entry's
// backoff has been over for longer than the longest backoff, the next refusal of any
// object drops it, so memory follows the objects refused lately, not all ever refused.
func TestRefusalsForgetObjectsNoLongerWritten(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(time.Now())
	r := &patch.Refusals{Clock: clock}
	for i := range 100 {
		gone := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint(i), UID: types.UID(fmt.Sprint("gone-", i))}}
		_ = r.Observe(t.Context(), nil, gone, invalid("x"))
	}
	if got := r.Remembered(); got != 100 {
		t.Fatalf("remembered %d refused objects, want 100", got)
	}
	live := &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "live", UID: "live"}}
	clock.SetTime(clock.Now().Add(4 * time.Minute))
	_ = r.Observe(t.Context(), nil, live, invalid("x"))
	if got := r.Remembered(); got != 101 {
		t.Errorf("after 4 minutes remembered %d, want all 101 (their backoff ended less than 5 minutes ago)", got)
	}
	clock.SetTime(clock.Now().Add(3 * time.Minute))
	_ = r.Observe(t.Context(), nil, live, invalid("x"))
	if got := r.Remembered(); got != 1 {
		t.Errorf("after 7 minutes remembered %d, want only the object still refused", got)
	}
	if wait, _ := patch.Refused(r.Check(live)); wait != 2*time.Second {
		t.Errorf("the live object's series: wait %v, want 2s (its second refusal)", wait)
	}
}
