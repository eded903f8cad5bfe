package patch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// cluster creates a MemberCluster named after the test, with Joined set by "the agent".
func cluster(t *testing.T) *musterv1.MemberCluster {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	setCondition(mc, musterv1.MemberClusterJoined)
	if err := env.Client.Status().Update(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	return mc
}

func setCondition(mc *musterv1.MemberCluster, condition string) {
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: condition, Status: metav1.ConditionTrue, Reason: "Test", Message: "set by the test"})
}

func read(t *testing.T, mc *musterv1.MemberCluster) *musterv1.MemberCluster {
	t.Helper()
	out := &musterv1.MemberCluster{}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(mc), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func conditionTypes(mc *musterv1.MemberCluster) []string {
	var out []string
	for _, c := range mc.Status.Conditions {
		out = append(out, c.Type)
	}
	slices.Sort(out)
	return out
}

func TestNothingChangedWritesNothing(t *testing.T) {
	mc := cluster(t)
	before := mc.ResourceVersion
	h := patch.NewHelper(env.Client, mc)
	setCondition(mc, musterv1.MemberClusterJoined) // the same condition again: no change
	if err := h.Patch(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	if got := read(t, mc).ResourceVersion; got != before {
		t.Errorf("resourceVersion moved from %s to %s: something was written", before, got)
	}
}

func TestSpecAndStatusWrittenTogether(t *testing.T) {
	mc := cluster(t)
	h := patch.NewHelper(env.Client, mc, patch.SharedStatus())
	mc.Spec.Accepted = true
	setCondition(mc, musterv1.MemberClusterAccepted)
	if err := h.Patch(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	got := read(t, mc)
	if !got.Spec.Accepted || !meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.MemberClusterAccepted) {
		t.Errorf("accepted %v, conditions %v: want the spec and the status written", got.Spec.Accepted, conditionTypes(got))
	}
	if mc.ResourceVersion != got.ResourceVersion || !meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterAccepted) {
		t.Errorf("the patched object (resourceVersion %s) is not what the server holds (%s)", mc.ResourceVersion, got.ResourceVersion)
	}
}

// An edit of metadata or spec by someone else no longer makes a one-writer status write
// conflict, and the edit stays.
func TestOwnedStatusIgnoresOtherWritersSpecEdits(t *testing.T) {
	mc := cluster(t)
	h := patch.NewHelper(env.Client, mc)

	other := read(t, mc)
	other.Labels = map[string]string{"team": "batch"}
	other.Spec.Accepted = true
	if err := env.Client.Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}

	setCondition(mc, musterv1.MemberClusterAvailable)
	if err := h.Patch(t.Context(), mc); err != nil {
		t.Fatalf("status patch of a one-writer kind: %v", err)
	}
	got := read(t, mc)
	if got.Labels["team"] != "batch" || !got.Spec.Accepted {
		t.Errorf("labels %v, accepted %v: the other writer's edit was lost", got.Labels, got.Spec.Accepted)
	}
	if want := []string{musterv1.MemberClusterAvailable, musterv1.MemberClusterJoined}; !slices.Equal(conditionTypes(got), want) {
		t.Errorf("conditions %v, want %v", conditionTypes(got), want)
	}
}

// A merge patch replaces the conditions list whole: where several controllers write
// status, a write from a stale list conflicts instead of dropping the other's condition,
// and the retry from a fresh read keeps both.
func TestSharedStatusKeepsAnotherWritersCondition(t *testing.T) {
	mc := cluster(t)
	h := patch.NewHelper(env.Client, mc, patch.SharedStatus())

	other := read(t, mc)
	setCondition(other, musterv1.MemberClusterAccepted)
	if err := env.Client.Status().Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}

	setCondition(mc, musterv1.MemberClusterAvailable)
	err := h.Patch(t.Context(), mc)
	if !apierrors.IsConflict(err) || !patch.LostRace(err) {
		t.Fatalf("patch from a stale conditions list: got %v, want a conflict", err)
	}
	if got := conditionTypes(read(t, mc)); slices.Contains(got, musterv1.MemberClusterAvailable) || !slices.Contains(got, musterv1.MemberClusterAccepted) {
		t.Fatalf("conditions after the refused write: %v", got)
	}

	fresh := read(t, mc)
	h = patch.NewHelper(env.Client, fresh, patch.SharedStatus())
	setCondition(fresh, musterv1.MemberClusterAvailable)
	if err := h.Patch(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	want := []string{musterv1.MemberClusterAccepted, musterv1.MemberClusterAvailable, musterv1.MemberClusterJoined}
	if got := conditionTypes(read(t, mc)); !slices.Equal(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
}

// A merge patch replaces the finalizers list whole: a finalizer added from a stale copy
// conflicts instead of dropping the one another writer added.
func TestFinalizerAddedConcurrentlyIsNotDropped(t *testing.T) {
	mc := cluster(t)
	h := patch.NewHelper(env.Client, mc)

	other := read(t, mc)
	controllerutil.AddFinalizer(other, "test.muster.dev/other")
	if err := env.Client.Update(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		latest := &musterv1.MemberCluster{}
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(mc), latest) == nil {
			latest.Finalizers = nil
			_ = env.Client.Update(context.Background(), latest)
		}
	})

	controllerutil.AddFinalizer(mc, "test.muster.dev/mine")
	if err := h.Patch(t.Context(), mc); !apierrors.IsConflict(err) {
		t.Fatalf("finalizer write from a stale copy: got %v, want a conflict", err)
	}
	fresh := read(t, mc)
	h = patch.NewHelper(env.Client, fresh)
	controllerutil.AddFinalizer(fresh, "test.muster.dev/mine")
	if err := h.Patch(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	want := []string{"test.muster.dev/mine", "test.muster.dev/other"}
	got := slices.Sorted(slices.Values(read(t, mc).Finalizers))
	if !slices.Equal(got, want) {
		t.Errorf("finalizers %v, want %v", got, want)
	}
}

// A status removed field by field is removed on the server too (a merge patch sends null).
func TestFieldClearedInStatusIsCleared(t *testing.T) {
	mc := cluster(t)
	h := patch.NewHelper(env.Client, mc)
	mc.Status.Conditions = nil
	if err := h.Patch(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	if got := read(t, mc).Status.Conditions; len(got) != 0 || len(mc.Status.Conditions) != 0 {
		t.Errorf("conditions on the server %v, in the patched object %v: want none", got, mc.Status.Conditions)
	}
}

// Writes tells a reconcile that its cache still shows the object as it was before the
// controller's own last status write, whose news it would otherwise report again.
func TestWritesRefusesAnObjectOlderThanTheLastWrite(t *testing.T) {
	mc := cluster(t)
	stale := mc.DeepCopy()
	var writes patch.Writes
	if err := writes.Check(stale); err != nil {
		t.Fatalf("before any write: %v", err)
	}
	h := patch.NewHelper(env.Client, mc, patch.Tracked(&writes))
	setCondition(mc, musterv1.MemberClusterAvailable)
	if err := h.Patch(t.Context(), mc); err != nil {
		t.Fatal(err)
	}
	err := writes.Check(stale)
	if !errors.Is(err, patch.ErrStale) || !patch.LostRace(err) {
		t.Fatalf("copy read before the write: got %v, want ErrStale", err)
	}
	if err := writes.Check(read(t, mc)); err != nil {
		t.Fatalf("copy read after the write: %v", err)
	}
	if err := writes.Check(stale); err != nil {
		t.Errorf("once the cache caught up the object is forgotten, got %v", err)
	}
}

func TestRequeue(t *testing.T) {
	conflict := apierrors.NewConflict(musterv1.GroupVersion.WithResource("fleetjobs").GroupResource(), "a", errors.New("changed"))
	other := errors.New("forbidden")
	for _, tc := range []struct {
		name    string
		err     error
		requeue bool
		wantErr error
	}{
		{name: "no error"},
		{name: "conflict", err: fmt.Errorf("patching: %w", conflict), requeue: true},
		{name: "stale cache", err: fmt.Errorf("reading: %w", patch.ErrStale), requeue: true},
		{name: "other error", err: other, wantErr: other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := patch.Requeue(tc.err)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if got := res.RequeueAfter == patch.RetryAfter; got != tc.requeue {
				t.Errorf("requeue after %v, want requeue %v", res.RequeueAfter, tc.requeue)
			}
		})
	}
}

func TestSoonest(t *testing.T) {
	for _, tc := range []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, time.Second, time.Second}, {time.Second, 0, time.Second}, {time.Second, 2 * time.Second, time.Second}, {3 * time.Second, time.Second, time.Second},
	} {
		if got := patch.Soonest(tc.a, tc.b); got != tc.want {
			t.Errorf("Soonest(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
