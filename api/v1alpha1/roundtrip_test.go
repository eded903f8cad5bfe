package v1alpha1_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// An hour of 2026 on whole seconds, as the API server stores times.
var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 2, 30, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Hour))
)

func raw(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }

func cond(typ string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, ObservedGeneration: 1, LastTransitionTime: t0, Reason: "Because", Message: "m"}
}

var (
	selector  = &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a"}}}}
	spot      = corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoSchedule}
	placement = musterv1.Placement{
		ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: selector, ClusterNames: []string{"member1", "member2"}},
		Tolerations:     []corev1.Toleration{spot},
	}
	podSpec = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"note": "n"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "c", Image: "busybox", Command: []string{"true"},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}},
		}}},
	}
	jobTemplate = batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "a"}, Annotations: map[string]string{"note": "n"}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](20), BackoffLimit: ptr.To[int32](3),
			CompletionMode: ptr.To(batchv1.IndexedCompletion), Template: podSpec},
	}
)

// everyField is one object of each kind with every field of its spec and status set, as
// users and controllers write them through the Go types.
func everyField(ns string) []client.Object {
	return []client.Object{memberClusterOfEveryField(), nodeSliceOfEveryField(ns), workOfEveryField(ns),
		fleetJobOfEveryField(ns), broadcastJobOfEveryField(ns), fleetCronJobOfEveryField(ns), workloadSpreadOfEveryField(ns)}
}

func memberClusterOfEveryField() *musterv1.MemberCluster {
	return &musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip"},
		Spec:       musterv1.MemberClusterSpec{Accepted: true, Taints: []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute, TimeAdded: &t0}}},
		Status: musterv1.MemberClusterStatus{
			Conditions: []metav1.Condition{cond(musterv1.MemberClusterJoined)}, Version: "v1.36.3",
			Nodes:                   &musterv1.NodeCounts{Total: 3, Ready: 2, Schedulable: 1},
			Allocatable:             corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("48Gi")},
			LastInventoryReportTime: &t1,
		},
	}
}

func nodeSliceOfEveryField(ns string) *musterv1.NodeSlice {
	return &musterv1.NodeSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "member1-0", Namespace: ns}, ClusterName: "member1", NodeCount: 1,
		Shapes: []musterv1.NodeShape{{
			Labels: map[string]string{"pool": "gpu"}, Taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
		}},
		Nodes: []musterv1.NodeInfo{{
			Name: "n0", Shape: ptr.To[int32](0), Labels: map[string]string{"zone": "a"}, Taints: []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}},
			Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}, Unschedulable: true, Ready: true,
		}},
	}
}

func workOfEveryField(ns string) *musterv1.Work {
	id := musterv1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "web", Name: "front"}
	return &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: ns},
		Spec: musterv1.WorkSpec{
			Manifests:    []musterv1.Manifest{{RawExtension: raw(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"front","namespace":"web"},"spec":{"replicas":2,"x-anything":{"kept":true}}}`)}},
			DeleteOption: &musterv1.DeleteOption{PropagationPolicy: musterv1.DeletePropagationOrphan},
			ApplyOption:  &musterv1.ApplyOption{ForceConflicts: true},
			FeedbackRules: []musterv1.FeedbackRule{{Resource: id, Mode: musterv1.FeedbackJSONPaths,
				JSONPaths: []musterv1.JSONPathRule{{Name: "ready", Path: ".status.readyReplicas"}}}},
		},
		Status: musterv1.WorkStatus{
			ObservedGeneration: 1, Conditions: []metav1.Condition{cond(musterv1.WorkApplied), cond(musterv1.WorkAvailable)},
			Manifests: []musterv1.ManifestStatus{{
				Ordinal: 0, Resource: id, Conditions: []metav1.Condition{cond(musterv1.WorkApplied)}, ObservedGeneration: 7,
				Status: ptr.To(raw(`{"readyReplicas":2,"conditions":[{"type":"Available","status":"True"}]}`)),
				Values: []musterv1.FeedbackValue{{Name: "ready", Value: raw(`2`)}, {Name: "list", Value: raw(`[{"a":1}]`)}},
			}},
		},
	}
}

func fleetJobSpec() musterv1.FleetJobSpec {
	return musterv1.FleetJobSpec{
		Template: jobTemplate,
		Placement: musterv1.FleetJobPlacement{Placement: placement, Mode: musterv1.PlacementDivided,
			Division: &musterv1.Division{Weights: []musterv1.ClusterWeight{{ClusterName: "member1", Weight: 3}, {ClusterName: "member2", Weight: 1}}}},
		ShardFailurePolicy: musterv1.ShardContinue,
	}
}

func fleetJobOfEveryField(ns string) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: ns},
		Spec:       fleetJobSpec(),
		Status: musterv1.FleetJobStatus{
			ObservedGeneration: 1, Conditions: []metav1.Condition{cond(musterv1.FleetJobScheduled)}, Phase: musterv1.JobRunning,
			StartTime: &t0, CompletionTime: &t1, Active: 4, Ready: 3, Succeeded: 10, Failed: 1, Progress: "10/20", ClusterCount: 2,
			Clusters: []musterv1.ClusterJobStatus{{
				ClusterName: "member1", Subset: "on-prem", Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](15),
				Indexes: &musterv1.IndexRange{Start: 0, End: 14}, Active: 3, Ready: 2, Succeeded: 8, Failed: 1,
				CompletedIndexes: "0-7", Phase: musterv1.JobRunning,
			}},
		},
	}
}

func broadcastJobSpec() musterv1.BroadcastJobSpec {
	return musterv1.BroadcastJobSpec{
		Parallelism: ptr.To(intstr.FromString("30%")), Template: podSpec,
		CompletionPolicy: musterv1.CompletionPolicy{Type: musterv1.CompletionAlways, ActiveDeadlineSeconds: ptr.To[int64](600), TTLSecondsAfterFinished: ptr.To[int32](60)},
		Paused:           true, FailurePolicy: musterv1.FailurePolicy{Type: musterv1.FailurePause, RestartLimit: 2},
		Placement: &placement,
	}
}

func broadcastJobOfEveryField(ns string) *musterv1.BroadcastJob {
	counts := musterv1.BroadcastCounts{Desired: 5, Active: 2, Succeeded: 2, Failed: 1}
	return &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: ns},
		Spec:       broadcastJobSpec(),
		Status: musterv1.BroadcastJobStatus{
			ObservedGeneration: 1, Conditions: []metav1.Condition{cond(musterv1.BroadcastJobPaused)}, Phase: musterv1.BroadcastJobPausedPh,
			StartTime: &t0, CompletionTime: &t1, BroadcastCounts: counts, Parallelism: ptr.To[int32](2),
			Clusters: []musterv1.ClusterBroadcastStatus{{ClusterName: "member1", BroadcastCounts: counts, Parallelism: ptr.To[int32](2), Phase: musterv1.BroadcastJobPausedPh}},
		},
	}
}

func fleetCronJobOfEveryField(ns string) *musterv1.FleetCronJob {
	return &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: ns},
		Spec: musterv1.FleetCronJobSpec{
			Schedule: "*/5 * * * *", TimeZone: ptr.To("Europe/Berlin"), StartingDeadlineSeconds: ptr.To[int64](30),
			ConcurrencyPolicy: musterv1.ConcurrencyReplace, Suspend: ptr.To(true),
			JobTemplate: &musterv1.FleetJobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"child": "yes"}, Annotations: map[string]string{"note": "n"}},
				Spec:       fleetJobSpec(),
			},
			SuccessfulJobsHistoryLimit: ptr.To[int32](5), FailedJobsHistoryLimit: ptr.To[int32](0),
		},
		Status: musterv1.FleetCronJobStatus{
			Conditions:  []metav1.Condition{cond(musterv1.FleetCronJobScheduleValid)},
			Active:      []corev1.ObjectReference{{APIVersion: "muster.dev/v1alpha1", Kind: "FleetJob", Namespace: ns, Name: "roundtrip-29000000", UID: "u"}},
			ActiveCount: 1, LastScheduleTime: &t0, LastSuccessfulTime: &t0, NextScheduleTime: &t1,
		},
	}
}

func workloadSpreadOfEveryField(ns string) *musterv1.WorkloadSpread {
	term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}
	return &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: "roundtrip", Namespace: ns},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: "muster.dev/v1alpha1", Kind: "FleetJob", Name: "roundtrip"},
			Subsets: []musterv1.WorkloadSpreadSubset{{
				Name: "on-prem", ClusterAffinity: musterv1.ClusterAffinity{ClusterSelector: selector, ClusterNames: []string{"member1"}},
				RequiredNodeSelectorTerm:   &term,
				PreferredNodeSelectorTerms: []corev1.PreferredSchedulingTerm{{Weight: 10, Preference: term}},
				Tolerations:                []corev1.Toleration{spot},
				Patch:                      ptr.To(raw(`{"metadata":{"labels":{"subset":"on-prem"}},"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1"}}}]}}`)),
				MaxReplicas:                ptr.To(intstr.FromInt32(3)),
			}, {Name: "cloud"}},
			ScheduleStrategy: musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](45)}},
		},
		Status: musterv1.WorkloadSpreadStatus{
			ObservedGeneration: 1, Replicas: 5, SubsetReplicas: "on-prem 3/3, cloud 2",
			Subsets: []musterv1.WorkloadSpreadSubsetStatus{{
				Name: "on-prem", Replicas: 3, MissingReplicas: 1, Conditions: []metav1.Condition{cond(musterv1.SubsetSchedulable)},
				Clusters: []musterv1.SubsetClusterStatus{{ClusterName: "member1", Replicas: 3}},
			}},
		},
	}
}

// sameJSON compares free-form JSON by its value: the API server may re-encode it.
func sameJSON(a, b runtime.RawExtension) bool {
	var x, y any
	return json.Unmarshal(a.Raw, &x) == nil && json.Unmarshal(b.Raw, &y) == nil && reflect.DeepEqual(x, y)
}

// specAndStatus is what a round trip must keep: every field but the metadata the API
// server sets.
func specAndStatus(obj client.Object) any {
	v := reflect.ValueOf(obj).Elem()
	out := map[string]any{}
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; name != "TypeMeta" && name != "ObjectMeta" {
			out[name] = v.Field(i).Interface()
		}
	}
	return out
}

// TestEveryFieldRoundTrips: each field the Go types write survives the API server: none
// is pruned for want of a schema, free-form JSON (manifests, patches, status feedback) is
// kept whole, and the status written through the status endpoint comes back as written.
func TestEveryFieldRoundTrips(t *testing.T) {
	ns := env.Namespace(t)
	opts := []cmp.Option{
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }),
		cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) }),
		cmp.Comparer(sameJSON),
	}
	for _, want := range everyField(ns) {
		t.Run(reflect.TypeOf(want).Elem().Name(), func(t *testing.T) {
			ctx := t.Context()
			obj := want.DeepCopyObject().(client.Object)
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if status := reflect.ValueOf(want).Elem().FieldByName("Status"); status.IsValid() {
				reflect.ValueOf(obj).Elem().FieldByName("Status").Set(status)
				if err := env.Client.Status().Update(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
			// A fresh object: decoding into a filled one would keep what the server dropped.
			got := reflect.New(reflect.TypeOf(want).Elem()).Interface().(client.Object)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(specAndStatus(want), specAndStatus(got), opts...); diff != "" {
				t.Errorf("stored object differs (-written +read):\n%s", diff)
			}
		})
	}
}
