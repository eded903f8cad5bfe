//go:build e2e

package work

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

func jobStatusIn(w *musterv1.Work, name string) (batchv1.JobStatus, bool) {
	var st batchv1.JobStatus
	ms := manifestStatusOf(w, "Job", name)
	if ms == nil || ms.Status == nil {
		return st, false
	}
	return st, json.Unmarshal(ms.Status.Raw, &st) == nil
}

func complete(st batchv1.JobStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// hubOutage is how long the hub's control plane stays down: longer than what is left of
// the 20s Job, so that it completes while the hub is gone. (It was 60s; past the Job's end
// the length adds only waiting, and the agent's reflectors back off longer the longer the
// outage lasts.)
const hubOutage = 30 * time.Second

// The hub's control plane is down for hubOutage while a Job runs in a member: the Job
// completes anyway, the Work reports Complete within 10s of the hub's return, and nothing
// in the member was re-created.
func TestHubOutageDoesNotStopWork(t *testing.T) {
	ctx := t.Context()
	m := member("member1")
	w := newWork(t, "member1", "through-outage", configMap("default", "outage-settings"), job("default", "outage-job", 20*time.Second))
	if err := hub().Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, keyOf(w), 30*time.Second, "the Job to run", func(w *musterv1.Work) bool {
		st, ok := jobStatusIn(w, "outage-job")
		return ok && st.Active == 1
	})
	uids := memberUIDs(t, m, []client.Object{
		&corev1.ConfigMap{ObjectMeta: objMeta("default", "outage-settings")},
		&batchv1.Job{ObjectMeta: objMeta("default", "outage-job")},
	})

	stopped := time.Now()
	if err := fleet.StopCluster(ctx, fleet.Hub); err != nil {
		t.Fatal(err)
	}
	if _, err := framework.WaitForJobCondition(ctx, m, types.NamespacedName{Namespace: "default", Name: "outage-job"}, batchv1.JobComplete, 55*time.Second); err != nil {
		t.Fatalf("the Job did not complete while the hub was down: %v", err)
	}
	t.Logf("the Job completed %s into the hub's outage", time.Since(stopped).Round(time.Second))
	time.Sleep(time.Until(stopped.Add(hubOutage)))
	if err := fleet.StartCluster(ctx, fleet.Hub); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	waitForWork(t, keyOf(w), 10*time.Second, "the Work to report Complete", func(w *musterv1.Work) bool {
		st, ok := jobStatusIn(w, "outage-job")
		return ok && complete(st)
	})
	t.Logf("the Work reported Complete %s after the hub returned", time.Since(back).Round(100*time.Millisecond))
	after := memberUIDs(t, m, []client.Object{
		&corev1.ConfigMap{ObjectMeta: objMeta("default", "outage-settings")},
		&batchv1.Job{ObjectMeta: objMeta("default", "outage-job")},
	})
	for key, uid := range uids {
		if after[key] != uid {
			t.Errorf("%s was re-created: uid %s before, %s after", key, uid, after[key])
		}
	}
	// New Works reach the agent only once its hub watch is re-established, and client-go's
	// reflector retries with a jittered backoff of up to 60s while the hub is gone (not
	// configurable through controller-runtime's cache). This bound covers that worst case;
	// the log line records what this run took.
	probe := newWork(t, "member1", "after-outage", configMap("default", "after-outage"))
	if err := hub().Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, keyOf(probe), 2*time.Minute, "a Work created after the outage to be applied", applied)
	t.Logf("a Work created after the outage was applied %s after the hub returned", time.Since(back).Round(100*time.Millisecond))
}

// The agent is killed while 50 Works are applied; after it restarts, no object of theirs
// was re-created or even rewritten.
func TestAgentRestartRewritesNothing(t *testing.T) {
	ctx := t.Context()
	m := member("member2")
	const works = 50
	for i := range works {
		w := newWork(t, "member2", fmt.Sprintf("restart-%02d", i), configMap("default", fmt.Sprintf("restart-%02d", i)))
		if err := hub().Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for i := range works {
		waitForWork(t, types.NamespacedName{Namespace: musterv1.MemberNamespace("member2"), Name: fmt.Sprintf("restart-%02d", i)}, 60*time.Second, "applied", applied)
	}
	before := configMapVersions(t, m, works)

	muster.Agents["member2"].Kill()
	if err := muster.StartAgent(m); err != nil {
		t.Fatal(err)
	}
	// A Work created after the restart is applied only once the new agent has synced
	// its caches and worked through the existing Works' queue.
	probe := newWork(t, "member2", "restart-probe", configMap("default", "restart-probe"))
	if err := hub().Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	waitForWork(t, keyOf(probe), 60*time.Second, "the probe Work to be applied by the restarted agent", applied)
	time.Sleep(3 * time.Second)

	after := configMapVersions(t, m, works)
	for name, v := range before {
		if after[name] != v {
			t.Errorf("ConfigMap %s changed across the agent restart: %s -> %s", name, v, after[name])
		}
	}
}

func objMeta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// memberUIDs reads the UIDs of objects in a member.
func memberUIDs(t *testing.T, m *framework.Cluster, objs []client.Object) map[string]types.UID {
	t.Helper()
	out := map[string]types.UID{}
	for _, o := range objs {
		if err := m.Client.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("%T %s", o, o.GetName())] = o.GetUID()
	}
	return out
}

// configMapVersions reads uid/resourceVersion of the restart test's ConfigMaps.
func configMapVersions(t *testing.T, m *framework.Cluster, n int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := range n {
		var cm corev1.ConfigMap
		name := fmt.Sprintf("restart-%02d", i)
		if err := m.Client.Get(t.Context(), types.NamespacedName{Namespace: "default", Name: name}, &cm); err != nil {
			t.Fatal(err)
		}
		out[name] = string(cm.UID) + "/" + cm.ResourceVersion
	}
	return out
}
