package shards_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	psaapi "k8s.io/pod-security-admission/api"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/musterhq/muster/api/podsecurity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const uidLabel = musterv1.FleetJobUIDLabel

func ensureNamespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := env.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// work creates the Work name on cluster, labelled as the shard of owner uid in subset
// (none when empty); an empty cluster label makes a Work no agent would take.
func work(t *testing.T, name, cluster, uid, subset string, noClusterLabel bool) *musterv1.Work {
	t.Helper()
	ensureNamespace(t, musterv1.MemberNamespace(cluster), nil)
	b := builders.MakeWork(name, cluster).ConfigMap("default", "cm", nil).Label(uidLabel, uid)
	if !noClusterLabel {
		b.Label(musterv1.ClusterNameLabel, cluster)
	}
	if subset != "" {
		b.Label(musterv1.SubsetLabel, subset)
	}
	w := b.Obj()
	w.UID = ""
	if err := env.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestWorksFindsAnOwnersShardsWhereverTheyAre: an owner's Works are found by its UID
// label in every member namespace, keyed by subset and cluster; another owner's Works and
// Works that name no cluster are not its shards.
func TestWorksFindsAnOwnersShardsWhereverTheyAre(t *testing.T) {
	const mine, theirs = "uid-works-mine", "uid-works-theirs"
	work(t, "w-plain", "works-a", mine, "", false)
	work(t, "w-spot", "works-b", mine, "spot", false)
	work(t, "w-other", "works-a", theirs, "", false)
	work(t, "w-nocluster", "works-c", mine, "", true)
	got, err := shards.Works(t.Context(), env.Client, uidLabel, mine)
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(got))
	if want := []string{"spot/works-b", "works-a"}; !slices.Equal(keys, want) {
		t.Fatalf("shards %v, want %v", keys, want)
	}
	if got["works-a"].Name != "w-plain" || got["spot/works-b"].Name != "w-spot" {
		t.Errorf("shard works-a is %s, spot/works-b is %s", got["works-a"].Name, got["spot/works-b"].Name)
	}
	none, err := shards.Works(t.Context(), env.Client, uidLabel, "uid-nobody")
	if err != nil || len(none) != 0 {
		t.Errorf("an owner with no shards has %v, %v", none, err)
	}
}

// TestCachedWorksReadsTheOwnerIndex: through a cache with the owner index, an owner's
// Works are those Works finds from the API server, of FleetJobs and BroadcastJobs alike;
// asking for the index twice on one cache is no error.
func TestCachedWorksReadsTheOwnerIndex(t *testing.T) {
	const fleetJob, broadcastJob = "uid-cached-fleetjob", "uid-cached-broadcastjob"
	work(t, "c-plain", "cached-a", fleetJob, "", false)
	work(t, "c-spot", "cached-b", fleetJob, "spot", false)
	bj := builders.MakeWork("c-broadcast", "cached-a").ConfigMap("default", "cm", nil).
		Label(musterv1.BroadcastJobUIDLabel, broadcastJob).Label(musterv1.ClusterNameLabel, "cached-a").Obj()
	bj.UID = ""
	if err := env.Client.Create(t.Context(), bj); err != nil {
		t.Fatal(err)
	}

	c, err := cache.New(env.Config, cache.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := shards.IndexWorksByOwner(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = c.Start(t.Context()) }()
	if !c.WaitForCacheSync(t.Context()) {
		t.Fatal("the cache did not sync")
	}
	for _, owner := range []struct {
		label string
		uid   types.UID
	}{{uidLabel, fleetJob}, {musterv1.BroadcastJobUIDLabel, broadcastJob}, {uidLabel, "uid-cached-nobody"}} {
		want, err := shards.Works(t.Context(), env.Client, owner.label, owner.uid)
		if err != nil {
			t.Fatal(err)
		}
		envtest.Eventually(t, "the cache to show "+string(owner.uid)+"'s Works", func() (bool, string) {
			got, err := shards.CachedWorks(t.Context(), c, owner.label, owner.uid)
			if err != nil {
				return false, err.Error()
			}
			return slices.Equal(workNames(got), workNames(want)), fmt.Sprintf("%v, want %v", workNames(got), workNames(want))
		})
	}
}

// workNames are works as sorted key=name pairs.
func workNames(works map[string]*musterv1.Work) []string {
	out := make([]string, 0, len(works))
	for key, w := range works {
		out = append(out, key+"="+w.Name)
	}
	slices.Sort(out)
	return out
}

// TestTakenReportsAWorkNameHeldByAnotherOwner: a Work someone made by hand under the name
// a shard is about to get is reported before the shard is created; the owner's own Work,
// or a free name, is not.
func TestTakenReportsAWorkNameHeldByAnotherOwner(t *testing.T) {
	const mine = "uid-taken-mine"
	work(t, "w-squatted", "taken-a", "uid-taken-squatter", "", false)
	work(t, "w-ours", "taken-a", mine, "", false)
	want := func(name string) *musterv1.Work {
		return builders.MakeWork(name, "taken-a").Label(uidLabel, mine).Obj()
	}
	got, err := shards.Taken(t.Context(), env.Client, []*musterv1.Work{want("w-free"), want("w-ours"), want("w-squatted")}, uidLabel)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Name != "w-squatted" || got.Labels[uidLabel] != "uid-taken-squatter" {
		t.Fatalf("Taken = %v, want the squatter's w-squatted as read from the API", got)
	}
	if got, err := shards.Taken(t.Context(), env.Client, []*musterv1.Work{want("w-free"), want("w-ours")}, uidLabel); got != nil || err != nil {
		t.Errorf("Taken of free and own names = %v, %v", got, err)
	}
}

// owner creates a FleetJob with the shards finalizer when held.
func owner(t *testing.T, name string, held bool) *musterv1.FleetJob {
	t.Helper()
	ensureNamespace(t, "release", nil)
	fj := builders.MakeFleetJob(name, "release").Obj()
	if held {
		fj.Finalizers = []string{musterv1.ShardsFinalizer}
	}
	if err := env.Client.Create(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	return fj
}

// TestReleaseWithoutShardsOrFinalizer: an owner that never held shards is released at
// once; one that holds the finalizer and no Works loses it; one already gone is released.
func TestReleaseWithoutShardsOrFinalizer(t *testing.T) {
	free := owner(t, "never-held", false)
	if done, err := shards.Release(t.Context(), env.Client, free, uidLabel); !done || err != nil {
		t.Errorf("Release of an owner without the finalizer = %t, %v", done, err)
	}

	held := owner(t, "held", true)
	if done, err := shards.Release(t.Context(), env.Client, held, uidLabel); !done || err != nil {
		t.Fatalf("Release of an owner without Works = %t, %v", done, err)
	}
	var got musterv1.FleetJob
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(held), &got); err != nil {
		t.Fatal(err)
	}
	if controllerutil.ContainsFinalizer(&got, musterv1.ShardsFinalizer) {
		t.Errorf("the finalizer stayed: %v", got.Finalizers)
	}

	gone := owner(t, "gone", true)
	stale := gone.DeepCopy()
	gone.Finalizers = nil
	if err := env.Client.Update(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(t.Context(), gone); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(gone), &got); !apierrors.IsNotFound(err) {
		t.Fatalf("the owner is still there: %v", err)
	}
	stale.UID = types.UID("uid-gone")
	if done, err := shards.Release(t.Context(), env.Client, stale, uidLabel); !done || err != nil {
		t.Errorf("Release of an owner already gone = %t, %v", done, err)
	}
}

// TestPodSecurityOfCarriesTheNamespacesLevels: a Work's objects get the enforce level of
// their hub namespace, or the hub's default when it names none, and the audit and warn
// levels only when the namespace names them.
func TestPodSecurityOfCarriesTheNamespacesLevels(t *testing.T) {
	ensureNamespace(t, "psa-restricted", map[string]string{psaapi.EnforceLevelLabel: "restricted", psaapi.WarnLevelLabel: "baseline"})
	ensureNamespace(t, "psa-unlabelled", nil)
	for _, c := range []struct {
		ns           string
		defaultLevel psaapi.Level
		want         map[string]string // labels; version labels are checked present
		absent       []string
	}{
		{ns: "psa-restricted", defaultLevel: psaapi.LevelBaseline,
			want: map[string]string{psaapi.EnforceLevelLabel: "restricted", psaapi.WarnLevelLabel: "baseline"}, absent: []string{psaapi.AuditLevelLabel}},
		{ns: "psa-unlabelled", defaultLevel: psaapi.LevelPrivileged,
			want: map[string]string{psaapi.EnforceLevelLabel: "privileged"}, absent: []string{psaapi.AuditLevelLabel, psaapi.WarnLevelLabel}},
		{ns: "psa-unlabelled", defaultLevel: "",
			want: map[string]string{psaapi.EnforceLevelLabel: string(podsecurity.DefaultLevel)}},
	} {
		value, err := shards.PodSecurityOf(t.Context(), env.Client, c.defaultLevel, c.ns)
		if err != nil {
			t.Fatalf("%s: %v", c.ns, err)
		}
		w := builders.MakeWork("w", "x").Obj()
		shards.SetPodSecurity(w, value)
		got, err := podsecurity.MemberLabelsOf(w.Annotations[podsecurity.WorkAnnotation])
		if err != nil {
			t.Fatalf("%s: the Work's annotation %q does not read back: %v", c.ns, value, err)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s (default %q): %s=%q, want %q; all %v", c.ns, c.defaultLevel, k, got[k], v, got)
			}
		}
		if got[psaapi.EnforceVersionLabel] == "" {
			t.Errorf("%s: no enforce version: %v", c.ns, got)
		}
		for _, k := range c.absent {
			if _, ok := got[k]; ok {
				t.Errorf("%s: %s set though the namespace names none: %v", c.ns, k, got)
			}
		}
	}
	if _, err := shards.PodSecurityOf(t.Context(), env.Client, "", "psa-missing"); !apierrors.IsNotFound(err) {
		t.Errorf("PodSecurityOf a missing namespace: %v, want not found", err)
	}
}
