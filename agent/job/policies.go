package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/api/indexset"
)

// failurePolicyAction is what the job's pod failure policy says about a failed pod: the
// action of the first matching rule and a message, or nil when no rule matches (the
// failure counts towards backoffLimit).
func failurePolicyAction(job *batchv1.Job, pod *corev1.Pod) (*batchv1.PodFailurePolicyAction, string) {
	policy := job.Spec.PodFailurePolicy
	if policy == nil || pod.Status.Phase != corev1.PodFailed {
		return nil, ""
	}
	for i, rule := range policy.Rules {
		if r := rule.OnExitCodes; r != nil {
			if container, code, ok := matchExitCodes(pod, r); ok {
				return &rule.Action, fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %v rule at index %d",
					container, pod.Namespace, pod.Name, code, rule.Action, i)
			}
		}
		for _, pattern := range rule.OnPodConditions {
			if hasPodCondition(pod, pattern.Type, pattern.Status) {
				return &rule.Action, fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d",
					pod.Namespace, pod.Name, pattern.Type, rule.Action, i)
			}
		}
	}
	return nil, ""
}

// matchExitCodes finds a terminated container (of the named one, if any) whose exit code
// the requirement matches. With NotIn, exit code 0 never matches: a container that
// succeeded does not explain a pod failure.
func matchExitCodes(pod *corev1.Pod, r *batchv1.PodFailurePolicyOnExitCodesRequirement) (string, int32, bool) {
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		term := s.State.Terminated
		if term == nil || (r.ContainerName != nil && *r.ContainerName != s.Name) {
			continue
		}
		in := slices.Contains(r.Values, term.ExitCode)
		switch {
		case r.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in:
			return s.Name, term.ExitCode, true
		case r.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in && term.ExitCode != 0:
			return s.Name, term.ExitCode, true
		}
	}
	return "", 0, false
}

func hasPodCondition(pod *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t && c.Status == s {
			return true
		}
	}
	return false
}

// successPolicyMet reports whether one rule of the job's success policy holds for the
// succeeded indexes, with a message naming it.
func successPolicyMet(job *batchv1.Job, succeeded indexset.Set) (string, bool) {
	policy := job.Spec.SuccessPolicy
	if policy == nil || job.Spec.Completions == nil {
		return "", false
	}
	completions := int(*job.Spec.Completions)
	for i, rule := range policy.Rules {
		var matched int
		if rule.SucceededIndexes != nil {
			want := indexset.Parse(*rule.SucceededIndexes, completions)
			matched = want.Overlap(succeeded)
			if rule.SucceededCount == nil && matched < want.Len() {
				continue
			}
		} else {
			matched = succeeded.Len()
		}
		if rule.SucceededCount != nil && matched < int(*rule.SucceededCount) {
			continue
		}
		return fmt.Sprintf("Matched rules at index %d", i), true
	}
	return "", false
}
