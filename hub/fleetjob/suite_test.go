package fleetjob_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/hub/internal/failover"
	"github.com/musterhq/muster/internal/testing/envtest"
	"github.com/musterhq/muster/placement/clusters"
)

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakeClock(time.Now())
	// recorder counts the controller's events as it records them.
	recorder *envtest.CountingRecorder
	// rounds are the controller's rounds, for tests that wait until it saw a change.
	rounds envtest.Rounds
	// cached reads through the controller's cache: what its next round will see.
	cached client.Reader
	// quietClusters are the clusters whose agents the tests have gone quiet, as health
	// tells the gate of an agent silent for half the grace period before its taint.
	quietClusters sync.Map
)

// TestMain runs the FleetJob controller, on a clock the tests move, against a real API
// server. No agent runs: tests read the Works the hub writes and write their feedback.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		recorder = envtest.NewCountingRecorder(mgr.GetEventRecorder("test"))
		cached = mgr.GetClient()
		// Evictions are not rate limited here: each test's own are all it waits for.
		gate := failover.New(clock, 1000, clusters.DefaultDisruptionThreshold, failover.DefaultUnreachableTolerationSeconds)
		gate.Fencing = clusters.Fencing{Grace: 40 * time.Second, Margin: clusters.DefaultFencingMargin}
		gate.Quiet = func(cluster string) bool { _, ok := quietClusters.Load(cluster); return ok }
		if err := mgr.Add(gate.Runnable()); err != nil {
			return err
		}
		r := &fleetjob.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder, Clock: clock, Failover: gate, Observed: func(fj *musterv1.FleetJob) { rounds.Done(fj) }}
		return r.SetupWithManager(mgr)
	}))
}

type fixture struct {
	t  *testing.T
	ns string
	// c1 and c2 are the test's own member clusters, accepted and available.
	c1, c2 string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	// Whole seconds, as the API server stores condition times.
	clock.SetTime(time.Now().Truncate(time.Second))
	f := &fixture{t: t, ns: env.Namespace(t)}
	f.c1, f.c2 = f.member("1"), f.member("2")
	return f
}

// member joins a cluster named after the test's namespace.
func (f *fixture) member(suffix string) string {
	f.t.Helper()
	name := fmt.Sprintf("%.40s-%s", f.ns, suffix)
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
	if err := env.Client.Create(f.t.Context(), mc); err != nil {
		f.t.Fatal(err)
	}
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "Test"})
	if err := env.Client.Status().Update(f.t.Context(), mc); err != nil {
		f.t.Fatal(err)
	}
	// The namespace may be there already, holding Works made before the cluster joined.
	if err := env.Client.Create(f.t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(name)}}); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	// A job placed before the controller's cache holds the cluster Available would leave
	// it out (a busy machine showed it: a Divided job placed whole on the other cluster).
	envtest.Eventually(f.t, "the controller's cache to hold "+name+" Available", func() (bool, string) {
		var seen musterv1.MemberCluster
		if err := cached.Get(f.t.Context(), client.ObjectKey{Name: name}, &seen); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(seen.Status.Conditions, musterv1.MemberClusterAvailable), "not Available yet"
	})
	return name
}

func (f *fixture) subset(name, cluster string, max *intstr.IntOrString) musterv1.WorkloadSpreadSubset {
	return musterv1.WorkloadSpreadSubset{Name: name, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{cluster}}, MaxReplicas: max}
}

func (f *fixture) spread(subsets ...musterv1.WorkloadSpreadSubset) *musterv1.WorkloadSpread {
	f.t.Helper()
	ws := &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: "spread", Namespace: f.ns},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: musterv1.GroupVersion.String(), Kind: "FleetJob", Name: "workers"},
			Subsets:         subsets,
		},
	}
	return ws
}

func (f *fixture) create(o client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.t.Context(), o); err != nil {
		f.t.Fatal(err)
	}
}

// workers is a FleetJob of parallelism pods without completions.
func (f *fixture) workers(parallelism int32) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: f.ns},
		Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "workers"}},
				Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
			},
		}}},
	}
}

// shards reads the Works of the test's FleetJob as "subset@cluster=parallelism[/completions]",
// sorted, leaving out Works being deleted.
func (f *fixture) shards() string {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns}); err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, w := range list.Items {
		if w.DeletionTimestamp != nil {
			continue
		}
		job := decodeJob(f.t, &w)
		s := fmt.Sprintf("%s@%s=%d", w.Labels[musterv1.SubsetLabel], w.Labels[musterv1.ClusterNameLabel], ptr.Deref(job.Spec.Parallelism, 0))
		if job.Spec.Completions != nil {
			s += fmt.Sprintf("/%d", *job.Spec.Completions)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func decodeJob(t *testing.T, w *musterv1.Work) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	if err := json.Unmarshal(w.Spec.Manifests[0].Raw, &job); err != nil {
		t.Fatal(err)
	}
	return &job
}

func (f *fixture) waitShards(want string) {
	f.t.Helper()
	envtest.Eventually(f.t, "shards "+want, func() (bool, string) {
		got := f.shards()
		return got == want, got
	})
}

// scale sets the FleetJob's parallelism.
func (f *fixture) scale(parallelism int32) {
	f.t.Helper()
	cur := &musterv1.FleetJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: "workers"}, cur); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Spec.Template.Spec.Parallelism = ptr.To(parallelism)
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

// waiting is a Job status with active pods, ready of them running and the others waiting
// for a node since the given time.
func waiting(active, ready int32, since time.Time) batchv1.JobStatus {
	return batchv1.JobStatus{Active: active, Ready: ptr.To(ready), Conditions: []batchv1.JobCondition{{
		Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, Reason: "Unschedulable",
		Message: fmt.Sprintf("%d pods cannot be scheduled: 0/4 nodes are available: 4 Insufficient cpu.", active-ready), LastTransitionTime: metav1.NewTime(since),
	}}}
}
