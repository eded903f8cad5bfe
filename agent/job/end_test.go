package job

import (
	"math"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/internal/testing/builders"

	"github.com/musterhq/muster/api/indexset"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestDecideEnd(t *testing.T) {
	type want struct {
		condition batchv1.JobConditionType
		reason    string
	}
	var (
		failure = func(reason string) want { return want{batchv1.JobFailureTarget, reason} }
		success = func(reason string) want { return want{batchv1.JobSuccessCriteriaMet, reason} }
		job     = func() *builders.JobBuilder { return builders.MakeJob("j", "ns") }
		perIdx  = func() *builders.JobBuilder { return job().Indexed().Completions(4).BackoffLimitPerIndex(1) }
	)
	for _, tc := range []struct {
		name   string
		job    *batchv1.Job
		pods   []*corev1.Pod
		tally  tally
		active int32
		fence  fence
		want   want
	}{
		{
			name:  "an earlier decision to fail stands although completions are now reached",
			job:   job().Completions(1).Condition(batchv1.JobFailureTarget, reasonBackoffLimit).Obj(),
			tally: tally{succeeded: 1},
			want:  failure(reasonBackoffLimit),
		},
		{
			name:  "a FailJob rule fails the job",
			job:   job().Completions(3).Obj(),
			tally: tally{failed: 1, failJob: "exit code 42"},
			want:  failure(reasonPodFailurePolicy),
		},
		{
			name:  "a FailJob rule is named even when the backoff limit is passed too",
			job:   job().BackoffLimit(0).Obj(),
			tally: tally{failed: 1, failJob: "exit code 42"},
			want:  failure(reasonPodFailurePolicy),
		},
		{
			name:   "failures up to backoffLimit keep the job running",
			job:    job().Completions(3).BackoffLimit(2).Obj(),
			tally:  tally{failed: 2},
			active: 1,
		},
		{
			name:  "one failure past backoffLimit fails the job",
			job:   job().Completions(3).BackoffLimit(2).Obj(),
			tally: tally{failed: 3},
			want:  failure(reasonBackoffLimit),
		},
		{
			name:   "container restarts reaching backoffLimit fail an OnFailure job",
			job:    job().RestartPolicy(corev1.RestartPolicyOnFailure).BackoffLimit(2).Obj(),
			pods:   []*corev1.Pod{builders.MakePod("p", "ns").Running().Restarts(2).Obj()},
			active: 1,
			want:   failure(reasonBackoffLimit),
		},
		{
			name:   "a job active past its deadline fails",
			job:    job().ActiveDeadlineSeconds(60).StartTime(at(-61)).Obj(),
			active: 1,
			want:   failure(reasonDeadline),
		},
		{
			name:   "a job exactly at its deadline fails",
			job:    job().ActiveDeadlineSeconds(60).StartTime(at(-60)).Obj(),
			active: 1,
			want:   failure(reasonDeadline),
		},
		{
			name:   "a job within its deadline runs on",
			job:    job().ActiveDeadlineSeconds(60).StartTime(at(-59)).Obj(),
			active: 1,
		},
		{
			name: "a suspended job does not run out its deadline",
			job:  job().ActiveDeadlineSeconds(60).StartTime(at(-3600)).Suspend(true).Obj(),
		},
		{
			name:   "a deadline too long for a duration is never reached",
			job:    job().ActiveDeadlineSeconds(math.MaxInt64).StartTime(at(-3600)).Obj(),
			active: 1,
		},
		{
			name:   "the deadline fails the job even when a backoff is pending",
			job:    job().ActiveDeadlineSeconds(10).StartTime(at(-20)).BackoffLimit(6).Obj(),
			tally:  tally{failed: 1},
			want:   failure(reasonDeadline),
			active: 0,
		},
		{
			name:   "failed indexes up to maxFailedIndexes keep the job running",
			job:    perIdx().MaxFailedIndexes(1).Obj(),
			tally:  tally{failed: 2, failedIndexes: indexset.Parse("1", 4)},
			active: 2,
		},
		{
			name:   "more failed indexes than maxFailedIndexes fail the job early",
			job:    perIdx().MaxFailedIndexes(1).Obj(),
			tally:  tally{failed: 4, failedIndexes: indexset.Parse("1,3", 4)},
			active: 2,
			want:   failure(reasonMaxFailedIndexes),
		},
		{
			name:  "a job whose every index finished, some failed, fails with FailedIndexes",
			job:   perIdx().Obj(),
			tally: tally{succeeded: 3, failed: 2, succeededIndexes: indexset.Parse("0-2", 4), failedIndexes: indexset.Parse("3", 4)},
			want:  failure(reasonFailedIndexes),
		},
		{
			name:   "a failed index waits for the other indexes to finish",
			job:    perIdx().Obj(),
			tally:  tally{succeeded: 1, failed: 2, succeededIndexes: indexset.Parse("0", 4), failedIndexes: indexset.Parse("3", 4)},
			active: 2,
		},
		{
			name:   "a success policy ends the job before all completions",
			job:    job().Indexed().Completions(4).SuccessRules(batchv1.SuccessPolicyRule{SucceededCount: new(int32(2))}).Obj(),
			tally:  tally{succeeded: 2, succeededIndexes: indexset.Parse("0-1", 4)},
			active: 2,
			want:   success(reasonSuccessPolicy),
		},
		{
			name:  "reaching completions with no pod running completes the job",
			job:   job().Completions(3).Obj(),
			tally: tally{succeeded: 3},
			want:  success(reasonCompletionsReached),
		},
		{
			name:   "reaching completions waits for the pods still running",
			job:    job().Completions(3).Obj(),
			tally:  tally{succeeded: 3},
			active: 1,
		},
		{
			name: "zero completions complete the job at once",
			job:  job().Completions(0).Obj(),
			want: success(reasonCompletionsReached),
		},
		{
			name:  "without completions the first success ends the job once no pod runs",
			job:   job().Parallelism(2).Obj(),
			tally: tally{succeeded: 1, failed: 1},
			want:  success(reasonCompletionsReached),
		},
		{
			name:   "without completions the job waits for its running pods after a success",
			job:    job().Parallelism(2).Obj(),
			tally:  tally{succeeded: 1},
			active: 1,
		},
		{
			name: "without completions and without a success the job runs on",
			job:  job().Parallelism(2).Obj(),
		},
		{
			name:   "the hub's fence fails a running job",
			job:    job().Completions(3).Obj(),
			tally:  tally{succeeded: 1},
			active: 2,
			fence:  fence{message: "cut off"},
			want:   failure(musterv1.JobReasonFenced),
		},
		{
			name:  "a job that reached its completions completes, fenced or not",
			job:   job().Completions(1).Obj(),
			tally: tally{succeeded: 1},
			fence: fence{message: "cut off"},
			want:  success(reasonCompletionsReached),
		},
		{
			name:  "a job past its backoff limit fails for that, not for the fence",
			job:   job().BackoffLimit(0).Obj(),
			tally: tally{failed: 1},
			fence: fence{message: "cut off"},
			want:  failure(reasonBackoffLimit),
		},
		{
			name:   "a fence not yet due leaves the job running",
			job:    job().Completions(3).Obj(),
			active: 3,
			fence:  fence{left: time.Minute},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decideEnd(tc.job, &tc.job.Status, tc.pods, tc.tally, tc.active, tc.fence, t0)
			switch {
			case got == nil && tc.want != (want{}):
				t.Errorf("no decision, want %s (%s)", tc.want.condition, tc.want.reason)
			case got != nil && (got.Type != tc.want.condition || got.Reason != tc.want.reason):
				t.Errorf("decided %s, want %s (%s)", describe(got), tc.want.condition, tc.want.reason)
			}
		})
	}
}
