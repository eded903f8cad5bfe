package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/internal/testing/builders"

	"github.com/musterhq/muster/api/indexset"
)

func TestFailurePolicyAction(t *testing.T) {
	var (
		in      = batchv1.PodFailurePolicyOnExitCodesOpIn
		notIn   = batchv1.PodFailurePolicyOnExitCodesOpNotIn
		failJob = batchv1.PodFailurePolicyActionFailJob
		ignore  = batchv1.PodFailurePolicyActionIgnore
		count   = batchv1.PodFailurePolicyActionCount
		failIdx = batchv1.PodFailurePolicyActionFailIndex
	)
	withRules := func(rules ...batchv1.PodFailurePolicyRule) *batchv1.Job {
		return builders.MakeJob("j", "ns").PodFailureRules(rules...).Obj()
	}
	failedWith := func(code int32) *corev1.Pod {
		return builders.MakePod("p", "ns").Phase(corev1.PodFailed).Exited("main", code, t0).Obj()
	}
	sidecarRule := builders.ExitCodeRule(failJob, in, 5)
	sidecarRule.OnExitCodes.ContainerName = ptr.To("sidecar")
	initFailed := failedWith(0)
	initFailed.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "setup", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 5}}}}

	for _, tc := range []struct {
		name    string
		job     *batchv1.Job
		pod     *corev1.Pod
		want    *batchv1.PodFailurePolicyAction
		message string
	}{
		{
			name: "without a policy every failure counts",
			job:  builders.MakeJob("j", "ns").Obj(),
			pod:  failedWith(5),
		},
		{
			name:    "an exit code in the list fails the job",
			job:     withRules(builders.ExitCodeRule(failJob, in, 5)),
			pod:     failedWith(5),
			want:    &failJob,
			message: "Container main for pod ns/p failed with exit code 5 matching FailJob rule at index 0",
		},
		{
			name: "an exit code outside the list counts towards backoffLimit",
			job:  withRules(builders.ExitCodeRule(failJob, in, 5)),
			pod:  failedWith(3),
		},
		{
			name: "a pod that is still running matches no rule",
			job:  withRules(builders.ExitCodeRule(failJob, in, 5)),
			pod:  builders.MakePod("p", "ns").Running().Exited("main", 5, t0).Obj(),
		},
		{
			name: "NotIn matches any other non-zero exit code",
			job:  withRules(builders.ExitCodeRule(failJob, notIn, 5)),
			pod:  failedWith(42),
			want: &failJob,
		},
		{
			name: "NotIn does not blame a container that succeeded",
			job:  withRules(builders.ExitCodeRule(failJob, notIn, 5)),
			pod:  failedWith(0),
		},
		{
			name: "a rule naming another container does not match",
			job:  withRules(sidecarRule),
			pod:  failedWith(5),
		},
		{
			name: "an init container's exit code matches too",
			job:  withRules(builders.ExitCodeRule(failJob, in, 5)),
			pod:  initFailed,
			want: &failJob,
		},
		{
			name: "the first matching rule wins",
			job:  withRules(builders.ExitCodeRule(ignore, in, 5), builders.ExitCodeRule(failJob, in, 5)),
			pod:  failedWith(5),
			want: &ignore,
		},
		{
			name: "a later rule matches when the first does not",
			job:  withRules(builders.ExitCodeRule(ignore, in, 1), builders.ExitCodeRule(failIdx, in, 5)),
			pod:  failedWith(5),
			want: &failIdx,
		},
		{
			name:    "a disruption is ignored by its pod condition",
			job:     withRules(builders.PodConditionRule(ignore, corev1.DisruptionTarget)),
			pod:     builders.MakePod("p", "ns").Phase(corev1.PodFailed).Condition(corev1.DisruptionTarget, corev1.ConditionTrue).Obj(),
			want:    &ignore,
			message: "Pod ns/p has condition DisruptionTarget matching Ignore rule at index 0",
		},
		{
			name: "a pod condition that is False does not match",
			job:  withRules(builders.PodConditionRule(ignore, corev1.DisruptionTarget)),
			pod:  builders.MakePod("p", "ns").Phase(corev1.PodFailed).Condition(corev1.DisruptionTarget, corev1.ConditionFalse).Obj(),
		},
		{
			name: "negative exit codes, as Windows reports them, match",
			job:  withRules(builders.ExitCodeRule(ignore, in, -1073741510)),
			pod:  failedWith(-1073741510),
			want: &ignore,
		},
		{
			name:    "NotIn 0 blames the container that failed, not the one that succeeded",
			job:     withRules(builders.ExitCodeRule(failJob, notIn, 0)),
			pod:     builders.MakePod("p", "ns").Phase(corev1.PodFailed).Exited("helper", 0, t0).Exited("main", 1, t0).Obj(),
			want:    &failJob,
			message: "Container main for pod ns/p failed with exit code 1 matching FailJob rule at index 0",
		},
		{
			name: "a rule on a False condition matches a pod whose condition is False",
			job: withRules(batchv1.PodFailurePolicyRule{Action: ignore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{
				{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse},
			}}),
			pod:  builders.MakePod("p", "ns").Phase(corev1.PodFailed).Condition(corev1.DisruptionTarget, corev1.ConditionFalse).Obj(),
			want: &ignore,
		},
		{
			name: "a Count rule says count",
			job:  withRules(builders.ExitCodeRule(count, in, 5)),
			pod:  failedWith(5),
			want: &count,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := failurePolicyAction(tc.job, tc.pod)
			if ptr.Deref(got, "") != ptr.Deref(tc.want, "") {
				t.Errorf("action = %v, want %v", ptr.Deref(got, "<none>"), ptr.Deref(tc.want, "<none>"))
			}
			if tc.message != "" && msg != tc.message {
				t.Errorf("message = %q, want %q", msg, tc.message)
			}
			if (got == nil) != (msg == "") {
				t.Errorf("message %q does not go with action %v", msg, got)
			}
		})
	}
}

func TestSuccessPolicyMet(t *testing.T) {
	indexes := func(s string) batchv1.SuccessPolicyRule {
		return batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(s)}
	}
	atLeast := func(n int32) batchv1.SuccessPolicyRule { return batchv1.SuccessPolicyRule{SucceededCount: ptr.To(n)} }
	both := func(s string, n int32) batchv1.SuccessPolicyRule {
		return batchv1.SuccessPolicyRule{SucceededIndexes: ptr.To(s), SucceededCount: ptr.To(n)}
	}
	job := func(rules ...batchv1.SuccessPolicyRule) *batchv1.Job {
		return builders.MakeJob("j", "ns").Indexed().Completions(10).SuccessRules(rules...).Obj()
	}
	for _, tc := range []struct {
		name      string
		job       *batchv1.Job
		succeeded string
		want      string
	}{
		{name: "without a policy only completions end the job", job: builders.MakeJob("j", "ns").Indexed().Completions(10).Obj(), succeeded: "0-9"},
		{name: "every listed index succeeded", job: job(indexes("0,2-3")), succeeded: "0-3", want: "Matched rules at index 0"},
		{name: "one listed index is still missing", job: job(indexes("0,2-3")), succeeded: "0,2"},
		{name: "the count alone is reached", job: job(atLeast(3)), succeeded: "1,5,9", want: "Matched rules at index 0"},
		{name: "the count alone is not reached", job: job(atLeast(3)), succeeded: "1,5"},
		{name: "enough of the listed indexes succeeded", job: job(both("0-4", 2)), succeeded: "3-4", want: "Matched rules at index 0"},
		{name: "successes outside the listed indexes do not make up the count", job: job(both("0-4", 2)), succeeded: "4-9"},
		{name: "a later rule ends the job when the first does not hold", job: job(indexes("0"), atLeast(2)), succeeded: "5-6", want: "Matched rules at index 1"},
		{name: "listed indexes beyond completions are never needed", job: job(indexes("8-20")), succeeded: "8-9", want: "Matched rules at index 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, ok := successPolicyMet(tc.job, indexset.Parse(tc.succeeded, 10))
			if ok != (tc.want != "") || msg != tc.want {
				t.Errorf("successPolicyMet = %q, %v; want %q", msg, ok, tc.want)
			}
		})
	}
	if _, ok := successPolicyMet(builders.MakeJob("j", "ns").SuccessRules(atLeast(1)).Obj(), indexset.Parse("0", 1)); ok {
		t.Error("a job without completions met its success policy")
	}
}
