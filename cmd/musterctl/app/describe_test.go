package app_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// shardWork creates the Work of fj's shard in cluster, as the hub would, with the status
// its agent would feed back: applied, and the member Job's status.
func shardWork(t *testing.T, fj *musterv1.FleetJob, cluster string, job batchv1.JobStatus) {
	t.Helper()
	ns := memberNamespace(t, cluster)
	manifest, _ := json.Marshal(&batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: fj.Name, Namespace: fj.Namespace}})
	work := &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "fleetjob-" + fj.Name, Namespace: ns, Labels: map[string]string{
			musterv1.FleetJobUIDLabel: string(fj.UID), musterv1.ClusterNameLabel: cluster,
		}},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}},
	}
	create(t, work)
	status, _ := json.Marshal(job)
	work.Status = musterv1.WorkStatus{
		Conditions: []metav1.Condition{condition(musterv1.WorkApplied, "AppliedManifestWorkComplete", ""), condition(musterv1.WorkAvailable, "ResourcesAvailable", "")},
		Manifests: []musterv1.ManifestStatus{{
			Resource:   musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: fj.Namespace, Name: fj.Name},
			Conditions: []metav1.Condition{condition(musterv1.WorkApplied, "Applied", "")},
			Status:     &runtime.RawExtension{Raw: status},
		}},
	}
	if err := env.Client.Status().Update(t.Context(), work); err != nil {
		t.Fatal(err)
	}
}

func TestDescribeFleetJobShowsConditionsShardsMemberJobsAndEvents(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob(t, ns, "render", nil)
	c1, c2 := uniqueName("desc-a"), uniqueName("desc-b")
	setStatus(t, fj, func(s *musterv1.FleetJobStatus) {
		s.Phase, s.Active, s.Succeeded, s.Failed = musterv1.JobFailed, 0, 1, 1
		s.Conditions = []metav1.Condition{condition(musterv1.FleetJobFailed, "ShardFailed", "the shard in cluster "+c2+" failed: BackoffLimitExceeded")}
		s.Clusters = []musterv1.ClusterJobStatus{
			{ClusterName: c1, Phase: musterv1.JobComplete, Completions: new(int32(1)), Succeeded: 1},
			{ClusterName: c2, Phase: musterv1.JobFailed, Completions: new(int32(1)), Failed: 1},
		}
	})
	shardWork(t, fj, c1, batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", Message: "Reached expected number of succeeded pods"}}})
	shardWork(t, fj, c2, batchv1.JobStatus{Failed: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}})
	create(t, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "render.1", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "FleetJob", APIVersion: musterv1.GroupVersion.String(), Namespace: ns, Name: fj.Name, UID: fj.UID},
		Type:           corev1.EventTypeWarning, Reason: "ShardFailed", Message: "shard in " + c2 + " failed",
		FirstTimestamp: metav1.NewTime(time.Now()), LastTimestamp: metav1.NewTime(time.Now()), Count: 1,
		Source: corev1.EventSource{Component: "muster-hub"},
	})

	r := musterctl("describe", "fj", "render", "-n", ns)
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{
		"Name: render",
		"Placement: Divided",
		"Phase: Failed",
		"Failed True ShardFailed", // the hub object's condition
		c1 + " Complete - 1 0 1 0 -",
		c2 + " Failed - 1 0 0 1 -",
		c1 + ":",
		"Applied: True (AppliedManifestWorkComplete,",
		"Available: True (ResourcesAvailable,",
		"Job: 0 active / 0 ready / 1 succeeded / 0 failed",
		"Complete True CompletionsReached", // the member Job's, as fed back
		"Failed True BackoffLimitExceeded",
		"Warning ShardFailed", // the hub's event
	} {
		if !hasLine(r.out, want) {
			t.Errorf("no line starting %q:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.out, "Job has reached the specified backoff limit") {
		t.Errorf("the member Job's failure message is missing:\n%s", r.out)
	}
}

func TestDescribeOtherKindsAndErrors(t *testing.T) {
	ns := env.Namespace(t)
	cluster := uniqueName("describe-mc")
	sample(t, "membercluster", "", cluster)
	sample(t, "fleetcronjob", ns, "nightly")

	if r := musterctl("describe", "cluster", cluster); r.code != 0 || !hasLine(r.out, "Name: "+cluster) || !hasLine(r.out, "accepted: true") || !hasLine(r.out, "Events: <none>") {
		t.Errorf("describe cluster:\n%s", r)
	}
	if r := musterctl("describe", "fcj", "nightly", "-n", ns); r.code != 0 || !hasLine(r.out, "schedule: '* * * * *'") {
		t.Errorf("describe fcj:\n%s", r)
	}
	errs := []struct {
		args   []string
		stderr string
	}{
		{[]string{"describe", "fj", "absent", "-n", ns}, `Error from server (NotFound): fleetjobs.muster.dev "absent" not found`},
		{[]string{"describe", "foo", "x"}, `error: the server doesn't have a resource type "foo"`},
		{[]string{"describe", "fj"}, "error: describe needs a kind and one name"},
		{[]string{"describe", "configmaps", "x"}, "error: musterctl describes Muster's kinds, not configmaps"},
	}
	for _, e := range errs {
		if r := musterctl(e.args...); r.code != 1 || !strings.Contains(r.err, e.stderr) {
			t.Errorf("%v: want exit 1 and %q:\n%s", e.args, e.stderr, r)
		}
	}
}

// Events about a shard's Work, written in the member's hub namespace, are shown with the
// job's own, oldest first: a refusal by a member is often only there.
func TestDescribeShowsEventsAboutTheShardsWorks(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob(t, ns, "evented", nil)
	cluster := uniqueName("evt")
	shardWork(t, fj, cluster, batchv1.JobStatus{Active: 1})
	var works musterv1.WorkList
	if err := env.Client.List(t.Context(), &works, client.MatchingLabels{musterv1.FleetJobUIDLabel: string(fj.UID)}); err != nil || len(works.Items) != 1 {
		t.Fatalf("the shard's Work: %v, %d found", err, len(works.Items))
	}
	work := &works.Items[0]
	event := func(name, namespace string, obj corev1.ObjectReference, reason, msg string, at time.Time) {
		create(t, &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, InvolvedObject: obj,
			Type: corev1.EventTypeNormal, Reason: reason, Message: msg, Count: 1,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Source: corev1.EventSource{Component: "muster-hub"},
		})
	}
	now := time.Now()
	event("evented.1", ns, corev1.ObjectReference{Kind: "FleetJob", Namespace: ns, Name: fj.Name, UID: fj.UID}, "Placed", "placed on 1 cluster", now.Add(-2*time.Minute))
	event("evented.2", work.Namespace, corev1.ObjectReference{Kind: "Work", Namespace: work.Namespace, Name: work.Name, UID: work.UID}, "Applied", "applied by the agent", now.Add(-time.Minute))
	event("unrelated", ns, corev1.ObjectReference{Kind: "FleetJob", Namespace: ns, Name: "other", UID: "not-this-one"}, "Placed", "someone else's", now)

	r := musterctl("describe", "fj", "evented", "-n", ns)
	if r.code != 0 || !hasLine(r.out, "Events:") {
		t.Fatalf("describe:\n%s", r)
	}
	placed, applied := strings.Index(r.out, "placed on 1 cluster"), strings.Index(r.out, "applied by the agent")
	if placed < 0 || applied < 0 || placed > applied {
		t.Errorf("want the job's event, then its Work's:\n%s", r.out)
	}
	if strings.Contains(r.out, "someone else's") {
		t.Errorf("describe shows another object's event:\n%s", r.out)
	}
}
