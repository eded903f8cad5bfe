package builders

import (
	"encoding/json"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// podTemplate is the pod every Muster builder's workload starts from: one container,
// restartPolicy Never, as the CRDs' rules require of a batch workload.
func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
	}}
}

func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name + "-uid")}
}

// FleetJobBuilder builds a FleetJob.
type FleetJobBuilder struct{ fj musterv1.FleetJob }

// MakeFleetJob starts a FleetJob of mode Single whose Job runs one pod.
func MakeFleetJob(name, namespace string) *FleetJobBuilder {
	return &FleetJobBuilder{fj: musterv1.FleetJob{
		ObjectMeta: objectMeta(name, namespace),
		Spec: musterv1.FleetJobSpec{
			Template:  batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate()}},
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementSingle},
		},
	}}
}

// Obj returns a copy of the FleetJob built so far.
func (b *FleetJobBuilder) Obj() *musterv1.FleetJob { return b.fj.DeepCopy() }

func (b *FleetJobBuilder) Parallelism(n int32) *FleetJobBuilder {
	b.fj.Spec.Template.Spec.Parallelism = ptr.To(n)
	return b
}

func (b *FleetJobBuilder) Completions(n int32) *FleetJobBuilder {
	b.fj.Spec.Template.Spec.Completions = ptr.To(n)
	return b
}

// Indexed sets the Job's completionMode Indexed.
func (b *FleetJobBuilder) Indexed() *FleetJobBuilder {
	b.fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return b
}

func (b *FleetJobBuilder) Mode(m musterv1.PlacementMode) *FleetJobBuilder {
	b.fj.Spec.Placement.Mode = m
	return b
}

// Clusters places the job on the named clusters only.
func (b *FleetJobBuilder) Clusters(names ...string) *FleetJobBuilder {
	b.fj.Spec.Placement.ClusterNames = names
	return b
}

// ClusterSelector places the job on the clusters with these labels.
func (b *FleetJobBuilder) ClusterSelector(labels map[string]string) *FleetJobBuilder {
	b.fj.Spec.Placement.ClusterSelector = &metav1.LabelSelector{MatchLabels: labels}
	return b
}

func (b *FleetJobBuilder) ShardFailurePolicy(p musterv1.ShardFailurePolicy) *FleetJobBuilder {
	b.fj.Spec.ShardFailurePolicy = p
	return b
}

// Pod changes the pod template of the Job.
func (b *FleetJobBuilder) Pod(mutate func(*corev1.PodTemplateSpec)) *FleetJobBuilder {
	mutate(&b.fj.Spec.Template.Spec.Template)
	return b
}

// BroadcastJobBuilder builds a BroadcastJob.
type BroadcastJobBuilder struct{ bj musterv1.BroadcastJob }

// MakeBroadcastJob starts a BroadcastJob running one pod on every node.
func MakeBroadcastJob(name, namespace string) *BroadcastJobBuilder {
	return &BroadcastJobBuilder{bj: musterv1.BroadcastJob{
		ObjectMeta: objectMeta(name, namespace),
		Spec:       musterv1.BroadcastJobSpec{Template: podTemplate()},
	}}
}

// Obj returns a copy of the BroadcastJob built so far.
func (b *BroadcastJobBuilder) Obj() *musterv1.BroadcastJob { return b.bj.DeepCopy() }

func (b *BroadcastJobBuilder) Parallelism(p intstr.IntOrString) *BroadcastJobBuilder {
	b.bj.Spec.Parallelism = &p
	return b
}

func (b *BroadcastJobBuilder) Paused(p bool) *BroadcastJobBuilder {
	b.bj.Spec.Paused = p
	return b
}

// NodeSelector runs the pods only on nodes with these labels.
func (b *BroadcastJobBuilder) NodeSelector(labels map[string]string) *BroadcastJobBuilder {
	b.bj.Spec.Template.Spec.NodeSelector = labels
	return b
}

// RestartLimit sets how often a node's failed pod is restarted before it counts as failed.
func (b *BroadcastJobBuilder) RestartLimit(n int32) *BroadcastJobBuilder {
	b.bj.Spec.FailurePolicy.RestartLimit = n
	return b
}

func (b *BroadcastJobBuilder) ActiveDeadlineSeconds(s int64) *BroadcastJobBuilder {
	b.bj.Spec.CompletionPolicy.ActiveDeadlineSeconds = ptr.To(s)
	return b
}

// Clusters places the job on the named clusters only.
func (b *BroadcastJobBuilder) Clusters(names ...string) *BroadcastJobBuilder {
	b.bj.Spec.Placement = &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: names}}
	return b
}

// FleetCronJobBuilder builds a FleetCronJob.
type FleetCronJobBuilder struct{ cj musterv1.FleetCronJob }

// MakeFleetCronJob starts a FleetCronJob that makes a FleetJob (see MakeFleetJob) every
// minute.
func MakeFleetCronJob(name, namespace string) *FleetCronJobBuilder {
	return &FleetCronJobBuilder{cj: musterv1.FleetCronJob{
		ObjectMeta: objectMeta(name, namespace),
		Spec: musterv1.FleetCronJobSpec{
			Schedule:    "* * * * *",
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: MakeFleetJob(name, namespace).Obj().Spec},
		},
	}}
}

// Obj returns a copy of the FleetCronJob built so far.
func (b *FleetCronJobBuilder) Obj() *musterv1.FleetCronJob { return b.cj.DeepCopy() }

func (b *FleetCronJobBuilder) Schedule(s string) *FleetCronJobBuilder {
	b.cj.Spec.Schedule = s
	return b
}

func (b *FleetCronJobBuilder) TimeZone(tz string) *FleetCronJobBuilder {
	b.cj.Spec.TimeZone = ptr.To(tz)
	return b
}

func (b *FleetCronJobBuilder) Suspend(s bool) *FleetCronJobBuilder {
	b.cj.Spec.Suspend = ptr.To(s)
	return b
}

func (b *FleetCronJobBuilder) ConcurrencyPolicy(p musterv1.ConcurrencyPolicy) *FleetCronJobBuilder {
	b.cj.Spec.ConcurrencyPolicy = p
	return b
}

func (b *FleetCronJobBuilder) StartingDeadlineSeconds(s int64) *FleetCronJobBuilder {
	b.cj.Spec.StartingDeadlineSeconds = ptr.To(s)
	return b
}

// Broadcast makes the cron's children BroadcastJobs (see MakeBroadcastJob) instead of
// FleetJobs.
func (b *FleetCronJobBuilder) Broadcast() *FleetCronJobBuilder {
	b.cj.Spec.JobTemplate = nil
	b.cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: MakeBroadcastJob(b.cj.Name, b.cj.Namespace).Obj().Spec}
	return b
}

// WorkloadSpreadBuilder builds a WorkloadSpread.
type WorkloadSpreadBuilder struct{ ws musterv1.WorkloadSpread }

// MakeWorkloadSpread starts a WorkloadSpread of the FleetJob target, without subsets.
func MakeWorkloadSpread(name, namespace, target string) *WorkloadSpreadBuilder {
	return &WorkloadSpreadBuilder{ws: musterv1.WorkloadSpread{
		ObjectMeta: objectMeta(name, namespace),
		Spec: musterv1.WorkloadSpreadSpec{TargetReference: musterv1.TargetReference{
			APIVersion: musterv1.GroupVersion.String(), Kind: "FleetJob", Name: target,
		}},
	}}
}

// Obj returns a copy of the WorkloadSpread built so far.
func (b *WorkloadSpreadBuilder) Obj() *musterv1.WorkloadSpread { return b.ws.DeepCopy() }

// Subset adds a subset on the named clusters taking at most maxReplicas (an int or a
// percentage; empty leaves it unbounded).
func (b *WorkloadSpreadBuilder) Subset(name, maxReplicas string, clusters ...string) *WorkloadSpreadBuilder {
	s := musterv1.WorkloadSpreadSubset{Name: name, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: clusters}}
	if maxReplicas != "" {
		s.MaxReplicas = ptr.To(intstr.Parse(maxReplicas))
	}
	b.ws.Spec.Subsets = append(b.ws.Spec.Subsets, s)
	return b
}

// Patch sets the last subset's patch of its pods, marshalled from patch.
func (b *WorkloadSpreadBuilder) Patch(patch any) *WorkloadSpreadBuilder {
	raw, err := json.Marshal(patch)
	if err != nil {
		panic(err)
	}
	b.ws.Spec.Subsets[len(b.ws.Spec.Subsets)-1].Patch = &runtime.RawExtension{Raw: raw}
	return b
}

func (b *WorkloadSpreadBuilder) Strategy(t musterv1.ScheduleStrategyType) *WorkloadSpreadBuilder {
	b.ws.Spec.ScheduleStrategy.Type = t
	return b
}
