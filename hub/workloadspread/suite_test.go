package workloadspread_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/hub/workloadspread"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakeClock(time.Now())
	// touches numbers the tests' touches of their FleetJobs; seen holds, by FleetJob, the
	// last touch a round of the FleetJob controller was done with.
	touches atomic.Int64
	seen    sync.Map
)

// TestMain runs the WorkloadSpread controller and the FleetJob controller it reports on
// (which places the shards and follows the spread's status), on one clock the tests
// move, against a real API server. No agent runs: tests read the Works the hub writes
// and write their feedback.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		rec := mgr.GetEventRecorder("test")
		fj := &fleetjob.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec, Clock: clock, Observed: func(fj *musterv1.FleetJob) {
			seen.Store(client.ObjectKeyFromObject(fj), fj.Annotations[touchedAnnotation])
		}}
		if err := fj.SetupWithManager(mgr); err != nil {
			return err
		}
		return (&workloadspread.Reconciler{Client: mgr.GetClient(), Recorder: rec, Clock: clock}).SetupWithManager(mgr)
	}))
}

// touchedAnnotation numbers a test's last touch of its FleetJob.
const touchedAnnotation = "test/touched"

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

// work returns the Work of the subset's shard in cluster.
func (f *fixture) work(subset, cluster string) *musterv1.Work {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(musterv1.MemberNamespace(cluster)),
		client.MatchingLabels{musterv1.FleetJobNamespaceLabel: f.ns, musterv1.SubsetLabel: subset}); err != nil || len(list.Items) != 1 {
		f.t.Fatalf("the Work of subset %s in %s: %d found, %v", subset, cluster, len(list.Items), err)
	}
	return &list.Items[0]
}

// report plays the agent: it feeds back the status of the subset's Job in cluster.
func (f *fixture) report(subset, cluster string, status batchv1.JobStatus) {
	f.t.Helper()
	w := f.work(subset, cluster)
	raw, err := json.Marshal(status)
	if err != nil {
		f.t.Fatal(err)
	}
	w.Status.Manifests = []musterv1.ManifestStatus{{
		Ordinal: 0, Resource: musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: f.ns, Name: "workers-" + subset},
		Status: &runtime.RawExtension{Raw: raw},
	}}
	if err := env.Client.Status().Update(f.t.Context(), w); err != nil {
		f.t.Fatal(err)
	}
}

// waitReported waits until the FleetJob's status shows the counts of status, which the
// agent of cluster reported for the shard of subset: the controller has read the report.
func (f *fixture) waitReported(subset, cluster string, status batchv1.JobStatus) {
	f.t.Helper()
	envtest.Eventually(f.t, "the report of "+subset+"@"+cluster+" in the status", func() (bool, string) {
		cur := &musterv1.FleetJob{}
		if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: "workers"}, cur); err != nil {
			return false, err.Error()
		}
		for _, c := range cur.Status.Clusters {
			if c.Subset == subset && c.ClusterName == cluster {
				return c.Active == status.Active && c.Ready == ptr.Deref(status.Ready, 0) && c.Succeeded == status.Succeeded && c.Failed == status.Failed, fmt.Sprintf("%+v", c)
			}
		}
		return false, fmt.Sprintf("%+v", cur.Status.Clusters)
	})
}

// update changes the FleetJob; with no change it only touches it, so that the controller
// looks again after the test moved the clock.
func (f *fixture) update(mutate func(*musterv1.FleetJob)) {
	f.t.Helper()
	cur := &musterv1.FleetJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: "workers"}, cur); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(cur.DeepCopy())
	mutate(cur)
	if cur.Annotations == nil {
		cur.Annotations = map[string]string{}
	}
	cur.Annotations[touchedAnnotation] = strconv.FormatInt(touches.Add(1), 10)
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

// waitObserved waits until a round of the controller is done with the FleetJob as the
// test last changed it (update), on the clock's current time: what it decided is written.
func (f *fixture) waitObserved() {
	f.t.Helper()
	key := client.ObjectKey{Namespace: f.ns, Name: "workers"}
	cur := &musterv1.FleetJob{}
	if err := env.Client.Get(f.t.Context(), key, cur); err != nil {
		f.t.Fatal(err)
	}
	want := cur.Annotations[touchedAnnotation]
	envtest.Eventually(f.t, "the controller to observe touch "+want, func() (bool, string) {
		got, _ := seen.Load(key)
		return got == want, fmt.Sprintf("last observed touch %v", got)
	})
}

func (f *fixture) scale(parallelism int32) {
	f.update(func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptr.To(parallelism) })
}

func (f *fixture) getSpread() *musterv1.WorkloadSpread {
	f.t.Helper()
	ws := &musterv1.WorkloadSpread{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: "spread"}, ws); err != nil {
		f.t.Fatal(err)
	}
	return ws
}

// waitSpreadReplicas waits until the spread reports replicas in all, and returns it.
func (f *fixture) waitSpreadReplicas(replicas int32) *musterv1.WorkloadSpread {
	f.t.Helper()
	var ws *musterv1.WorkloadSpread
	envtest.Eventually(f.t, fmt.Sprintf("the spread to report %d replicas", replicas), func() (bool, string) {
		ws = f.getSpread()
		return ws.Status.Replicas == replicas, fmt.Sprintf("%+v", ws.Status)
	})
	return ws
}

// schedulable is the subset's Schedulable condition as the spread reports it.
func (f *fixture) schedulable(subset string) *metav1.Condition {
	for _, s := range f.getSpread().Status.Subsets {
		if s.Name == subset {
			return meta.FindStatusCondition(s.Conditions, musterv1.SubsetSchedulable)
		}
	}
	return nil
}

func (f *fixture) waitSchedulable(subset string, status metav1.ConditionStatus) *metav1.Condition {
	f.t.Helper()
	var c *metav1.Condition
	envtest.Eventually(f.t, fmt.Sprintf("subset %s Schedulable=%s", subset, status), func() (bool, string) {
		c = f.schedulable(subset)
		return c != nil && c.Status == status, fmt.Sprintf("%+v", c)
	})
	return c
}

// waiting is a Job status with active pods, ready of them running and the others waiting
// for a node since the given time.
func waiting(active, ready int32, since time.Time) batchv1.JobStatus {
	return batchv1.JobStatus{Active: active, Ready: ptr.To(ready), Conditions: []batchv1.JobCondition{{
		Type: musterv1.JobPodsUnschedulable, Status: corev1.ConditionTrue, Reason: "Unschedulable",
		Message: fmt.Sprintf("%d pods cannot be scheduled: 0/4 nodes are available: 4 Insufficient cpu.", active-ready), LastTransitionTime: metav1.NewTime(since),
	}}}
}

func num(n int32) *intstr.IntOrString { return ptr.To(intstr.FromInt32(n)) }
