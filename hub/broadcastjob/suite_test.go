package broadcastjob_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/broadcastjob"
	"github.com/musterhq/muster/hub/internal/failover"
	"github.com/musterhq/muster/internal/testing/envtest"
	"github.com/musterhq/muster/placement/clusters"
)

var (
	env   *envtest.Environment
	clock = clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
	// recorder counts the controller's events as it records them.
	recorder *envtest.CountingRecorder
)

// TestMain runs the hub's BroadcastJob controller against a real API server. No agent
// runs: tests read the Works the hub writes and write the agents' feedback themselves.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		recorder = envtest.NewCountingRecorder(mgr.GetEventRecorder("test"))
		// Evictions are not rate limited here: each test's own are all it waits for.
		gate := failover.New(clock, 1000, clusters.DefaultDisruptionThreshold, failover.DefaultUnreachableTolerationSeconds)
		if err := mgr.Add(gate.Runnable()); err != nil {
			return err
		}
		return (&broadcastjob.Reconciler{Client: mgr.GetClient(), Recorder: recorder, Clock: clock, Failover: gate}).SetupWithManager(mgr)
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
	f := &fixture{t: t, ns: env.Namespace(t)}
	f.c1, f.c2 = f.member("1"), f.member("2")
	return f
}

// member joins a cluster named after the test's namespace.
func (f *fixture) member(suffix string) string {
	f.t.Helper()
	name := fmt.Sprintf("%.40s-%s", f.ns, suffix)
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
	f.create(mc)
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "Test"})
	if err := env.Client.Status().Update(f.t.Context(), mc); err != nil {
		f.t.Fatal(err)
	}
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(name)}})
	return name
}

func (f *fixture) create(o client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.t.Context(), o); err != nil {
		f.t.Fatal(err)
	}
}

// job is a BroadcastJob named name; with clusters, placed on them.
func (f *fixture) job(name string, clusters ...string) *musterv1.BroadcastJob {
	job := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: musterv1.BroadcastJobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
		}}},
	}
	if len(clusters) > 0 {
		job.Spec.Placement = &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: clusters}}
	}
	return job
}

func (f *fixture) get(name string) *musterv1.BroadcastJob {
	f.t.Helper()
	job := &musterv1.BroadcastJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, job); err != nil {
		f.t.Fatal(err)
	}
	return job
}

// works lists the Works of the test's jobs in cluster.
func (f *fixture) works(cluster string) []musterv1.Work {
	f.t.Helper()
	var list musterv1.WorkList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(musterv1.MemberNamespace(cluster)),
		client.MatchingLabels{musterv1.BroadcastJobNamespaceLabel: f.ns}); err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// agentApplies plays the agent of cluster on the Work of job name: the member refused the
// shard with refusal, or created it and reports status.
func (f *fixture) agentApplies(name, cluster, refusal string, status musterv1.BroadcastJobStatus) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var w musterv1.Work
		key := client.ObjectKey{Namespace: musterv1.MemberNamespace(cluster), Name: broadcastjob.WorkName(f.job(name))}
		if err := env.Client.Get(f.t.Context(), key, &w); err != nil {
			return err
		}
		ms := musterv1.ManifestStatus{Resource: musterv1.ResourceIdentifier{Group: musterv1.GroupVersion.Group, Version: "v1alpha1", Kind: "BroadcastJob", Namespace: f.ns, Name: name}}
		cond := metav1.Condition{Type: musterv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Applied", Message: "applied with server-side apply", ObservedGeneration: w.Generation}
		if refusal != "" {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "Forbidden", refusal
		} else {
			raw, err := json.Marshal(status)
			if err != nil {
				return err
			}
			ms.Status = &runtime.RawExtension{Raw: raw}
		}
		meta.SetStatusCondition(&ms.Conditions, cond)
		w.Status.Manifests = []musterv1.ManifestStatus{ms}
		return env.Client.Status().Update(f.t.Context(), &w)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// waitCondition waits for job name's condition with the given status and reason, and
// for also when given.
func (f *fixture) waitCondition(name, t string, status metav1.ConditionStatus, reason string, also func(*musterv1.BroadcastJob) bool) *metav1.Condition {
	f.t.Helper()
	var c *metav1.Condition
	envtest.Eventually(f.t, fmt.Sprintf("%s=%s %s", t, status, reason), func() (bool, string) {
		job := &musterv1.BroadcastJob{}
		if err := env.Client.Get(f.t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}, job); err != nil {
			return false, err.Error()
		}
		c = meta.FindStatusCondition(job.Status.Conditions, t)
		return c != nil && c.Status == status && c.Reason == reason && (also == nil || also(job)), fmt.Sprintf("%+v %+v", c, job.Status.BroadcastCounts)
	})
	return c
}
