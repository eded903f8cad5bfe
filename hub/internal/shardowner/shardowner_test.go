package shardowner_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/internal/shardowner"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/internal/testing/builders"
)

// agentFinalizer stands for the finalizer an agent holds on a Work until its shard's
// member objects are gone.
const agentFinalizer = "test.muster.dev/agent"

func opening(c client.Client) shardowner.Opening {
	return shardowner.Opening{Client: c, UIDLabel: musterv1.BroadcastJobUIDLabel, Writes: &patch.Writes{}, Refusals: &patch.Refusals{}}
}

// owner creates a BroadcastJob in a namespace of the test's own, holding the shards
// finalizer when held.
func owner(t *testing.T, name string, held bool) *musterv1.BroadcastJob {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shardowner-"}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	bj := builders.MakeBroadcastJob(name, ns.Name).Obj()
	if held {
		bj.Finalizers = []string{musterv1.ShardsFinalizer}
	}
	if err := env.Client.Create(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	return bj
}

// shard creates the Work of owner's shard on cluster, in the cluster's member namespace.
func shard(t *testing.T, uid, cluster string, finalizers ...string) *musterv1.Work {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(cluster)}}
	if err := env.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	w := builders.MakeWork("shard-"+uid[:8], cluster).ConfigMap("default", "cm", nil).
		Label(musterv1.BroadcastJobUIDLabel, uid).Label(musterv1.ClusterNameLabel, cluster).Obj()
	w.UID, w.Finalizers = "", finalizers
	if err := env.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

func exists(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestOpenEndsForAGoneOwner: an owner deleted before its event is handled ends the
// reconcile quietly.
func TestOpenEndsForAGoneOwner(t *testing.T) {
	res, done, err := opening(env.Client).Open(t.Context(), client.ObjectKey{Namespace: "default", Name: "absent"}, &musterv1.BroadcastJob{})
	if !done || err != nil || !res.IsZero() {
		t.Errorf("Open = %+v, done %t, %v; want done, no requeue, no error", res, done, err)
	}
}

// TestOpenLetsALiveOwnerThrough: an owner neither deleted nor stale is read and handed to
// the reconciler.
func TestOpenLetsALiveOwnerThrough(t *testing.T) {
	bj := owner(t, "live", false)
	var got musterv1.BroadcastJob
	res, done, err := opening(env.Client).Open(t.Context(), client.ObjectKeyFromObject(bj), &got)
	if done || err != nil || !res.IsZero() {
		t.Fatalf("Open = %+v, done %t, %v; want the reconcile to go on", res, done, err)
	}
	if got.UID != bj.UID {
		t.Errorf("Open read %q, want the owner %q", got.UID, bj.UID)
	}
}

// behind is a client whose reads return a copy of the owner older than its last write, as
// an informer cache that has not caught up does.
type behind struct {
	client.Client
	old *musterv1.BroadcastJob
}

func (b behind) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	b.old.DeepCopyInto(obj.(*musterv1.BroadcastJob))
	return nil
}

// TestOpenWaitsForTheCacheToShowTheLastStatusWrite: a copy older than the reconciler's own
// status write is retried shortly rather than decided on, and once the read shows the
// write, the reconcile goes on.
func TestOpenWaitsForTheCacheToShowTheLastStatusWrite(t *testing.T) {
	bj := owner(t, "stale", false)
	old := bj.DeepCopy()
	o := opening(env.Client)
	h := patch.NewHelper(env.Client, bj, patch.Tracked(o.Writes))
	bj.Status.Phase = musterv1.BroadcastJobPhase("Running")
	if err := h.Patch(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	o.Client = behind{Client: env.Client, old: old}
	res, done, err := o.Open(t.Context(), client.ObjectKeyFromObject(bj), &musterv1.BroadcastJob{})
	if !done || err != nil || res.RequeueAfter != patch.RetryAfter {
		t.Errorf("Open of a stale copy = %+v, done %t, %v; want done, requeued after %s", res, done, err, patch.RetryAfter)
	}
	o.Client = env.Client
	if _, done, err := o.Open(t.Context(), client.ObjectKeyFromObject(bj), &musterv1.BroadcastJob{}); done || err != nil {
		t.Errorf("Open of the written copy: done %t, %v; want the reconcile to go on", done, err)
	}
}

// TestADeletedOwnerReleasesItsShardsThenGoes: deleting an owner deletes its Works (and
// only its own); once they are gone, its finalizer comes off and the owner goes.
func TestADeletedOwnerReleasesItsShardsThenGoes(t *testing.T) {
	bj := owner(t, "deleted", true)
	other := owner(t, "bystander", true)
	mine := []*musterv1.Work{shard(t, string(bj.UID), "rel-a"), shard(t, string(bj.UID), "rel-b")}
	theirs := shard(t, string(other.UID), "rel-a")
	if err := env.Client.Delete(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	o := opening(env.Client)
	res, done, err := o.Open(t.Context(), client.ObjectKeyFromObject(bj), &musterv1.BroadcastJob{})
	if !done || err != nil || res.RequeueAfter != 10*time.Second {
		t.Errorf("first Open = %+v, done %t, %v; want done, rechecked in 10s while Works remain", res, done, err)
	}
	for _, w := range mine {
		if exists(t, w) {
			t.Errorf("Work %s of the deleted owner remains", w.Name)
		}
	}
	if !exists(t, theirs) {
		t.Fatal("another owner's Work was deleted")
	}
	if !exists(t, bj) {
		t.Fatal("the owner went before its Works were seen gone")
	}
	res, done, err = o.Open(t.Context(), client.ObjectKeyFromObject(bj), &musterv1.BroadcastJob{})
	if !done || err != nil || !res.IsZero() {
		t.Errorf("second Open = %+v, done %t, %v; want done with no requeue", res, done, err)
	}
	if exists(t, bj) {
		t.Errorf("the owner remains, finalizers %v", bj.Finalizers)
	}
}

// TestAnOwnerWaitsForAgentsToLetGo: while an agent still holds a deleted owner's Work, the
// owner keeps its finalizer, and the Work is not deleted again.
func TestAnOwnerWaitsForAgentsToLetGo(t *testing.T) {
	bj := owner(t, "waiting", true)
	w := shard(t, string(bj.UID), "wait-a", agentFinalizer)
	if err := env.Client.Delete(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	o := opening(env.Client)
	for i := range 2 {
		res, done, err := o.Open(t.Context(), client.ObjectKeyFromObject(bj), &musterv1.BroadcastJob{})
		if !done || err != nil || res.RequeueAfter != 10*time.Second {
			t.Errorf("Open %d = %+v, done %t, %v; want a recheck in 10s", i, res, done, err)
		}
	}
	if !exists(t, w) || w.DeletionTimestamp == nil {
		t.Fatalf("the held Work is not being deleted: %+v", w.ObjectMeta)
	}
	if !exists(t, bj) || !controllerutil.ContainsFinalizer(bj, musterv1.ShardsFinalizer) {
		t.Fatalf("the owner lost its finalizer while a Work remains: %v", bj.Finalizers)
	}
	controllerutil.RemoveFinalizer(w, agentFinalizer)
	if err := env.Client.Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if _, done, err := o.Open(t.Context(), client.ObjectKeyFromObject(bj), &musterv1.BroadcastJob{}); !done || err != nil {
		t.Fatalf("Open after the agent let go: done %t, %v", done, err)
	}
	if exists(t, bj) {
		t.Errorf("the owner remains after its last Work went: %v", bj.Finalizers)
	}
}

// TestHoldShardsAddsTheFinalizerOnce: the finalizer is written once; holding it again
// writes nothing.
func TestHoldShardsAddsTheFinalizerOnce(t *testing.T) {
	bj := owner(t, "hold", false)
	o := opening(env.Client)
	if err := o.HoldShards(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	var got musterv1.BroadcastJob
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(bj), &got); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(&got, musterv1.ShardsFinalizer) {
		t.Fatalf("finalizers %v", got.Finalizers)
	}
	version := got.ResourceVersion
	if err := o.HoldShards(t.Context(), &got); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(bj), &got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != version || len(got.Finalizers) != 1 {
		t.Errorf("holding again wrote: resourceVersion %s → %s, finalizers %v", version, got.ResourceVersion, got.Finalizers)
	}
}

// TestHoldShardsLosesToAConcurrentWrite: a copy someone else changed since it was read is
// not overwritten; the conflict goes back to the reconciler to retry from a fresh read.
func TestHoldShardsLosesToAConcurrentWrite(t *testing.T) {
	bj := owner(t, "race", false)
	stale := bj.DeepCopy()
	bj.Labels = map[string]string{"edited": "yes"}
	if err := env.Client.Update(t.Context(), bj); err != nil {
		t.Fatal(err)
	}
	err := opening(env.Client).HoldShards(t.Context(), stale)
	if !apierrors.IsConflict(err) {
		t.Fatalf("HoldShards on a stale copy: %v, want a conflict", err)
	}
	if res, rerr := patch.Requeue(err); rerr != nil || res.RequeueAfter != patch.RetryAfter {
		t.Errorf("the conflict requeues as %+v, %v", res, rerr)
	}
}
