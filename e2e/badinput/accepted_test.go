//go:build e2e

package badinput

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// condition is what an admitted object must come to say about itself. An empty Type
// means the kind has no conditions: the object must only be stored as it was sent.
type condition struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string // a substring; empty matches any message
}

// acceptedCase is an object the hub must admit (as the built-in kinds would, or because
// only a member can know it is wrong) and whose status must say what happened to it.
type acceptedCase struct {
	input string
	// setup prepares the fleet for the case (a member's quota, a long namespace).
	setup func(t *testing.T)
	obj   client.Object
	want  condition
	// also checks what the condition cannot say (no pods ran, say).
	also    func(t *testing.T, obj client.Object)
	timeout time.Duration
}

func (tc acceptedCase) name() string {
	if tc.want.Type == "" {
		return fmt.Sprintf("%s %s -> accepted and stored", kindOf(tc.obj), tc.input)
	}
	return fmt.Sprintf("%s %s -> accepted with %s=%s %s", kindOf(tc.obj), tc.input, tc.want.Type, tc.want.Status, tc.want.Reason)
}

const (
	// quotaNS is a namespace in which member1's quota allows no Jobs.
	quotaNS = "badinput-quota"
	// memberWorks is where a Work for member1 goes.
	memberWorks = "muster-member-" + member1Name
)

// longNS is a namespace name of the maximum length, 63 characters.
var longNS = "badinput-" + repeat("l", 63-len("badinput-"))

func acceptedCases() []acceptedCase {
	return []acceptedCase{
		// The built-in Job runs nothing at parallelism 0; so must the shard.
		// outcome from hub/fleetjob and agent/job
		{input: "parallelism 0", obj: fleetJob("par-zero", func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptr.To[int32](0) }),
			want: condition{musterv1.FleetJobShardsApplied, metav1.ConditionTrue, "Applied", ""}, also: expectNoPodsFor(5 * time.Second)},
		{input: "placed on a cluster that does not exist", obj: fleetJob("nowhere", func(fj *musterv1.FleetJob) { fj.Spec.Placement.ClusterNames = []string{"no-such-cluster"} }),
			want: condition{musterv1.FleetJobScheduled, metav1.ConditionFalse, "NoEligibleClusters", ""}},
		// outcome from hub/fleetjob (PodsSchedulable with the member scheduler's words)
		// The hub's inventory knows nodes, not pods: pod affinity is the member's to judge.
		{input: "whose pods need a pod that never runs", obj: fleetJob("no-node", func(fj *musterv1.FleetJob) {
			jobPod(fj).Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "never-runs"}},
				TopologyKey:   corev1.LabelHostname,
			}}}}
		}), want: condition{musterv1.FleetJobPodsSchedulable, metav1.ConditionFalse, "Unschedulable", "didn't match pod affinity rules"}},
		// outcome from hub/fleetjob (ShardsApplied with the member API server's message)
		{input: "in a namespace where member1's quota allows no Jobs", setup: quotaForbidsJobs, obj: fleetJob("over-quota", func(fj *musterv1.FleetJob) {
			fj.Namespace = quotaNS
			fj.Spec.Placement.ClusterNames = []string{member1Name}
		}), want: condition{musterv1.FleetJobShardsApplied, metav1.ConditionFalse, "ApplyFailed", "quota"}},
		// 61 characters and index 9: the longest pod host name is 63, a DNS label.
		{input: "61-character name, Indexed, 10 completions", obj: fleetJob(repeat("b", 61), indexed(10), func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptr.To[int32](5) }),
			want: condition{musterv1.FleetJobComplete, metav1.ConditionTrue, "ShardsCompleted", ""}},
		// outcome from hub/broadcastjob
		{input: "without placement", obj: broadcastJob("no-placement", func(j *musterv1.BroadcastJob) { j.Spec.Placement = nil }),
			want: condition{musterv1.BroadcastJobNodesEligible, metav1.ConditionFalse, "NoPlacement", "spec.placement is not set"}},
		// outcome from hub/broadcastjob (Work names capped like FleetJob shards')
		{input: "63-character name in a 63-character namespace", setup: createLongNS, obj: broadcastJob(repeat("j", 63), func(j *musterv1.BroadcastJob) { j.Namespace = longNS }),
			want: condition{musterv1.BroadcastJobComplete, metav1.ConditionTrue, "Completed", ""}},
		// As OpenKruise: a deadline of 0 fails the job on its first pass, before any shard.
		{input: "activeDeadlineSeconds 0", obj: broadcastJob("deadline-zero", func(j *musterv1.BroadcastJob) {
			j.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To[int64](0)
		}), want: condition{musterv1.BroadcastJobFailed, metav1.ConditionTrue, "DeadlineExceeded", ""}},
		// OpenKruise refuses a dot; pod names and label values take one (README, differences).
		{input: "named with a dot", obj: broadcastJob("prefetch.v2"),
			want: condition{musterv1.BroadcastJobComplete, metav1.ConditionTrue, "Completed", ""}},
		// February 29th comes every leap year: rare, not never.
		{input: "schedule 0 0 29 2 *", obj: cronJob("feb29", func(cj *musterv1.FleetCronJob) { cj.Spec.Schedule = "0 0 29 2 *" }),
			want: condition{musterv1.FleetCronJobScheduleValid, metav1.ConditionTrue, "ScheduleValid", ""}},
		{input: "timeZone Etc/GMT-14", obj: cronJob("gmt14", func(cj *musterv1.FleetCronJob) { cj.Spec.TimeZone = ptr.To("Etc/GMT-14") }),
			want: condition{musterv1.FleetCronJobScheduleValid, metav1.ConditionTrue, "ScheduleValid", ""}},
		{input: "preferred term weights 1 and 100", obj: spread("weights", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets[0].PreferredNodeSelectorTerms = append(preferred(1), preferred(100)...)
		})},
		// As OpenKruise: 0 turns rescheduling off; an unbounded subset may come first.
		{input: "rescheduleCriticalSeconds 0", obj: spread("reschedule-off", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](0)}}
		})},
		{input: "an unbounded subset before a bounded last one", obj: spread("unbounded-first", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets = []musterv1.WorkloadSpreadSubset{subset("a"), subset("b")}
			ws.Spec.Subsets[1].MaxReplicas = ptr.To(intstr.FromInt32(2))
		})},
		{input: "ghost with a NoExecute taint", obj: memberCluster("ghost", taints(corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute})),
			want: condition{musterv1.MemberClusterAccepted, metav1.ConditionFalse, "ClusterNotAccepted", "musterctl accept ghost"}},
		// Only the member's API server knows these are wrong: the agent reports its words.
		{input: "ConfigMap with data key 'bad key!'", obj: work("bad-key", memberWorks, configMap("badinput-bad-key", "bad key!", "x")),
			want: condition{musterv1.WorkApplied, metav1.ConditionFalse, "ManifestsFailed", "1 of 1 manifests failed to apply"},
			also: expectManifestMessage("Invalid value: \"bad key!\"")},
		{input: "manifest of a kind the member does not serve", obj: work("widget", memberWorks, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"}}`),
			want: condition{musterv1.WorkApplied, metav1.ConditionFalse, "ManifestsFailed", "1 of 1 manifests failed to apply"},
			also: expectManifestMessage("Widget")},
		{input: "JSONPath feedback .data.v", obj: withFeedback(work("feedback", memberWorks, configMap("badinput-feedback", "v", "42")), "badinput-feedback", musterv1.FeedbackJSONPaths, ".data.v"),
			want: condition{musterv1.WorkApplied, metav1.ConditionTrue, "AllManifestsApplied", ""}},
		{input: "500 nodes", obj: nodeSlice("full", "ghost", musterv1.MaxNodesPerSlice)},
	}
}

// expectAccepted creates the case's object on the hub and waits for its condition.
func expectAccepted(t *testing.T, tc acceptedCase) {
	if tc.setup != nil {
		tc.setup(t)
	}
	obj := tc.obj.DeepCopyObject().(client.Object)
	if err := fleet.Hub.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("refused: %v", err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), obj) })
	timeout := tc.timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	err := framework.Until(t.Context(), timeout, tc.name(), func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err.Error(), nil
		}
		if tc.want.Type == "" {
			return stored(tc.obj, obj)
		}
		conds := conditionsOf(obj)
		c := meta.FindStatusCondition(conds, tc.want.Type)
		if c == nil {
			return false, fmt.Sprintf("no %s condition in %s", tc.want.Type, describe(conds)), nil
		}
		ok := c.Status == tc.want.Status && c.Reason == tc.want.Reason && strings.Contains(c.Message, tc.want.Message)
		return ok, describe(conds), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tc.also != nil {
		tc.also(t, obj)
	}
}

// stored says whether the hub kept what was sent, for kinds without conditions.
func stored(sent, got client.Object) (bool, string, error) {
	switch s := sent.(type) {
	case *musterv1.NodeSlice:
		n := len(got.(*musterv1.NodeSlice).Nodes)
		return n == len(s.Nodes), fmt.Sprintf("%d nodes stored", n), nil
	case *musterv1.WorkloadSpread:
		terms := got.(*musterv1.WorkloadSpread).Spec.Subsets[0].PreferredNodeSelectorTerms
		return len(terms) == len(s.Spec.Subsets[0].PreferredNodeSelectorTerms), fmt.Sprintf("%d preferred terms stored", len(terms)), nil
	}
	return true, "", nil
}

func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case *musterv1.FleetJob:
		return o.Status.Conditions
	case *musterv1.BroadcastJob:
		return o.Status.Conditions
	case *musterv1.FleetCronJob:
		return o.Status.Conditions
	case *musterv1.MemberCluster:
		return o.Status.Conditions
	case *musterv1.Work:
		return o.Status.Conditions
	}
	return nil
}

func describe(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
	}
	return "[" + strings.Join(parts, "; ") + "]"
}

// expectNoPodsFor checks that no member runs a pod of the FleetJob during d.
func expectNoPodsFor(d time.Duration) func(*testing.T, client.Object) {
	return func(t *testing.T, obj client.Object) {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			for _, m := range fleet.Members {
				if pods := podsOf(t, m, obj.GetNamespace(), obj.GetName()); len(pods) > 0 {
					t.Fatalf("%s runs %d pods of a job with parallelism 0", m.Name, len(pods))
				}
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// expectManifestMessage checks the member's message on the Work's first manifest.
func expectManifestMessage(want string) func(*testing.T, client.Object) {
	return func(t *testing.T, obj client.Object) {
		w := obj.(*musterv1.Work)
		if len(w.Status.Manifests) == 0 {
			t.Fatalf("no manifest status in %+v", w.Status)
		}
		c := meta.FindStatusCondition(w.Status.Manifests[0].Conditions, musterv1.WorkApplied)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, want) {
			t.Errorf("manifest Applied condition %+v, want False saying %q", c, want)
		}
	}
}

// quotaForbidsJobs makes quotaNS on the hub and, in member1, the same namespace with a
// quota of zero Jobs: the member refuses the shard the hub cannot know is over quota.
func quotaForbidsJobs(t *testing.T) {
	ctx := t.Context()
	for _, c := range []*framework.Cluster{fleet.Hub, member1} {
		if err := client.IgnoreAlreadyExists(c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: quotaNS}})); err != nil {
			t.Fatal(err)
		}
	}
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "no-jobs", Namespace: quotaNS},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/jobs.batch": resource.MustParse("0")}},
	}
	if err := client.IgnoreAlreadyExists(member1.Client.Create(ctx, quota)); err != nil {
		t.Fatal(err)
	}
}

func createLongNS(t *testing.T) {
	err := fleet.Hub.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: longNS}})
	if client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

// podsOf lists the pods of a job (a shard Job's or a BroadcastJob's) in a member.
func podsOf(t *testing.T, m *framework.Cluster, namespace, job string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := m.Client.List(t.Context(), &list, client.InNamespace(namespace), client.MatchingLabels{"batch.kubernetes.io/job-name": job}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}
