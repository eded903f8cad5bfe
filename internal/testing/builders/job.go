package builders

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// JobBuilder builds a batch/v1 Job.
type JobBuilder struct{ job batchv1.Job }

// MakeJob starts a NonIndexed Job with restartPolicy Never and one container, its UID
// derived from its name; parallelism and completions are unset as in a bare manifest.
func MakeJob(name, namespace string) *JobBuilder {
	return &JobBuilder{job: batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID(name + "-uid")},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
		}}},
	}}
}

// Obj returns a copy of the Job built so far.
func (b *JobBuilder) Obj() *batchv1.Job { return b.job.DeepCopy() }

func (b *JobBuilder) Parallelism(n int32) *JobBuilder {
	b.job.Spec.Parallelism = ptr.To(n)
	return b
}

func (b *JobBuilder) Completions(n int32) *JobBuilder {
	b.job.Spec.Completions = ptr.To(n)
	return b
}

// Indexed sets completionMode Indexed.
func (b *JobBuilder) Indexed() *JobBuilder {
	b.job.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	return b
}

func (b *JobBuilder) Suspend(s bool) *JobBuilder {
	b.job.Spec.Suspend = ptr.To(s)
	return b
}

func (b *JobBuilder) BackoffLimit(n int32) *JobBuilder {
	b.job.Spec.BackoffLimit = ptr.To(n)
	return b
}

func (b *JobBuilder) BackoffLimitPerIndex(n int32) *JobBuilder {
	b.job.Spec.BackoffLimitPerIndex = ptr.To(n)
	return b
}

func (b *JobBuilder) MaxFailedIndexes(n int32) *JobBuilder {
	b.job.Spec.MaxFailedIndexes = ptr.To(n)
	return b
}

func (b *JobBuilder) ActiveDeadlineSeconds(s int64) *JobBuilder {
	b.job.Spec.ActiveDeadlineSeconds = ptr.To(s)
	return b
}

func (b *JobBuilder) RestartPolicy(p corev1.RestartPolicy) *JobBuilder {
	b.job.Spec.Template.Spec.RestartPolicy = p
	return b
}

func (b *JobBuilder) PodReplacementPolicy(p batchv1.PodReplacementPolicy) *JobBuilder {
	b.job.Spec.PodReplacementPolicy = ptr.To(p)
	return b
}

// PodFailureRules sets a pod failure policy with these rules, in order.
func (b *JobBuilder) PodFailureRules(rules ...batchv1.PodFailurePolicyRule) *JobBuilder {
	b.job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: rules}
	return b
}

// SuccessRules sets a success policy with these rules, in order.
func (b *JobBuilder) SuccessRules(rules ...batchv1.SuccessPolicyRule) *JobBuilder {
	b.job.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: rules}
	return b
}

func (b *JobBuilder) Annotation(key, value string) *JobBuilder {
	if b.job.Annotations == nil {
		b.job.Annotations = map[string]string{}
	}
	b.job.Annotations[key] = value
	return b
}

// Deleting marks the Job as being deleted at t.
func (b *JobBuilder) Deleting(t time.Time) *JobBuilder {
	b.job.DeletionTimestamp = ptr.To(metav1.NewTime(t))
	return b
}

// StartTime sets status.startTime.
func (b *JobBuilder) StartTime(t time.Time) *JobBuilder {
	b.job.Status.StartTime = ptr.To(metav1.NewTime(t))
	return b
}

// Counted sets the succeeded and failed counters of the status.
func (b *JobBuilder) Counted(succeeded, failed int32) *JobBuilder {
	b.job.Status.Succeeded, b.job.Status.Failed = succeeded, failed
	return b
}

// Uncounted sets status.uncountedTerminatedPods.
func (b *JobBuilder) Uncounted(succeeded, failed []types.UID) *JobBuilder {
	b.job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: succeeded, Failed: failed}
	return b
}

// CompletedIndexes sets status.completedIndexes, in the "1,3-5" form.
func (b *JobBuilder) CompletedIndexes(s string) *JobBuilder {
	b.job.Status.CompletedIndexes = s
	return b
}

// FailedIndexes sets status.failedIndexes, in the "1,3-5" form.
func (b *JobBuilder) FailedIndexes(s string) *JobBuilder {
	b.job.Status.FailedIndexes = ptr.To(s)
	return b
}

// Condition adds a True condition to the status.
func (b *JobBuilder) Condition(t batchv1.JobConditionType, reason string) *JobBuilder {
	b.job.Status.Conditions = append(b.job.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason})
	return b
}

// ExitCodeRule is a pod failure policy rule on the exit codes of any container.
func ExitCodeRule(action batchv1.PodFailurePolicyAction, op batchv1.PodFailurePolicyOnExitCodesOperator, codes ...int32) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: op, Values: codes}}
}

// PodConditionRule is a pod failure policy rule on a True pod condition.
func PodConditionRule(action batchv1.PodFailurePolicyAction, t corev1.PodConditionType) batchv1.PodFailurePolicyRule {
	return batchv1.PodFailurePolicyRule{Action: action, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: t, Status: corev1.ConditionTrue}}}
}
