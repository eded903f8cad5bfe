package job

import (
	"math"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/musterhq/muster/internal/testing/builders"
)

// t0 is the clock of the unit tables: a fixed instant, so that waits are exact.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

func TestBackoffDelay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int32
		want     time.Duration
	}{
		{"no failure replaces the pod at once", 0, 0},
		{"the first failure waits ten seconds", 1, 10 * time.Second},
		{"the second failure doubles the wait", 2, 20 * time.Second},
		{"the third failure doubles it again", 3, 40 * time.Second},
		{"the sixth failure waits 320 seconds", 6, 320 * time.Second},
		{"the seventh failure is capped at ten minutes", 7, 10 * time.Minute},
		{"endless failures still wait ten minutes", math.MaxInt32, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoffDelay(tc.failures); got != tc.want {
				t.Errorf("backoffDelay(%d) = %v, want %v", tc.failures, got, tc.want)
			}
		})
	}
}

func TestBackoffRemaining(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record backoffRecord
		now    time.Time
		want   time.Duration
	}{
		{"a job without failures does not wait", backoffRecord{}, at(0), 0},
		{"one failure three seconds ago waits seven more", backoffRecord{failures: 1, lastFailure: at(0)}, at(3), 7 * time.Second},
		{"one failure long ago no longer holds back", backoffRecord{failures: 1, lastFailure: at(0)}, at(3600), 0},
		{"two failures wait twenty seconds from the last one", backoffRecord{failures: 2, lastFailure: at(10)}, at(15), 15 * time.Second},
		{"a failure stamped in the future waits its whole delay and more", backoffRecord{failures: 1, lastFailure: at(5)}, at(0), 15 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.record.remaining(tc.now); got != tc.want {
				t.Errorf("remaining = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBackoffStoreUpdate(t *testing.T) {
	failedAt := func(name string, s int) *corev1.Pod {
		return builders.MakePod(name, "ns").Phase(corev1.PodFailed).Exited("main", 1, at(s)).Obj()
	}
	succeededAt := func(name string, s int) *corev1.Pod {
		return builders.MakePod(name, "ns").Phase(corev1.PodSucceeded).Exited("main", 0, at(s)).Obj()
	}
	for _, tc := range []struct {
		name              string
		before            backoffRecord
		succeeded, failed []*corev1.Pod
		want              backoffRecord
	}{
		{
			name:   "a failure starts the count",
			failed: []*corev1.Pod{failedAt("a", 5)},
			want:   backoffRecord{failures: 1, lastFailure: at(5)},
		},
		{
			name:   "failures add up across rounds",
			before: backoffRecord{failures: 2, lastFailure: at(5)},
			failed: []*corev1.Pod{failedAt("a", 9)},
			want:   backoffRecord{failures: 3, lastFailure: at(9)},
		},
		{
			name:      "a success after the failures resets the wait",
			before:    backoffRecord{failures: 2, lastFailure: at(5)},
			succeeded: []*corev1.Pod{succeededAt("s", 8)},
			failed:    []*corev1.Pod{failedAt("a", 7)},
			want:      backoffRecord{},
		},
		{
			name:      "a failure after a success of the same round counts",
			before:    backoffRecord{failures: 2, lastFailure: at(5)},
			succeeded: []*corev1.Pod{succeededAt("s", 6)},
			failed:    []*corev1.Pod{failedAt("a", 7)},
			want:      backoffRecord{failures: 1, lastFailure: at(7)},
		},
		{
			name:      "a success seen a round after a later failure resets nothing",
			before:    backoffRecord{failures: 1, lastFailure: at(7)},
			succeeded: []*corev1.Pod{succeededAt("s", 6)},
			want:      backoffRecord{failures: 1, lastFailure: at(7)},
		},
		{
			name:      "a success seen a round after a failure of the same second resets nothing",
			before:    backoffRecord{failures: 1, lastFailure: at(7)},
			succeeded: []*corev1.Pod{succeededAt("s", 7)},
			want:      backoffRecord{failures: 1, lastFailure: at(7)},
		},
		{
			name:      "a success seen a round after an earlier failure resets the wait",
			before:    backoffRecord{failures: 1, lastFailure: at(7)},
			succeeded: []*corev1.Pod{succeededAt("s", 8)},
			want:      backoffRecord{},
		},
		{
			name:   "the wait runs from the latest failure, whatever the order pods are listed in",
			failed: []*corev1.Pod{failedAt("late", 9), failedAt("early", 3)},
			want:   backoffRecord{failures: 2, lastFailure: at(9)},
		},
		{
			name:   "nothing finished keeps the record",
			before: backoffRecord{failures: 1, lastFailure: at(5)},
			want:   backoffRecord{failures: 1, lastFailure: at(5)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newBackoffStore()
			s.records["job"] = tc.before
			if got := s.update("job", tc.succeeded, tc.failed); got != tc.want {
				t.Errorf("update = %+v, want %+v", got, tc.want)
			}
			if got := s.get("job"); got != tc.want {
				t.Errorf("stored %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBackoffLimit(t *testing.T) {
	job := func() *builders.JobBuilder { return builders.MakeJob("j", "ns") }
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		want int32
	}{
		{"an unset limit allows six failures", job().Obj(), 6},
		{"an explicit limit holds", job().BackoffLimit(2).Obj(), 2},
		{"an unset limit with backoffLimitPerIndex allows any number", job().Indexed().BackoffLimitPerIndex(1).Obj(), math.MaxInt32},
		{"an explicit limit holds with backoffLimitPerIndex too", job().Indexed().BackoffLimitPerIndex(1).BackoffLimit(3).Obj(), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoffLimit(tc.job); got != tc.want {
				t.Errorf("backoffLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPastBackoffLimitOnFailure(t *testing.T) {
	onFailure := func(limit int32) *batchv1.Job {
		return builders.MakeJob("j", "ns").RestartPolicy(corev1.RestartPolicyOnFailure).BackoffLimit(limit).Obj()
	}
	restarted := func(name string, phase corev1.PodPhase, n int32) *corev1.Pod {
		return builders.MakePod(name, "ns").Phase(phase).Restarts(n).Obj()
	}
	for _, tc := range []struct {
		name string
		job  *batchv1.Job
		pods []*corev1.Pod
		want bool
	}{
		{
			name: "restarts do not count with restartPolicy Never",
			job:  builders.MakeJob("j", "ns").BackoffLimit(1).Obj(),
			pods: []*corev1.Pod{restarted("a", corev1.PodRunning, 5)},
		},
		{
			name: "restarts below the limit keep the job running",
			job:  onFailure(3),
			pods: []*corev1.Pod{restarted("a", corev1.PodRunning, 2)},
		},
		{
			name: "restarts of all running pods add up to the limit",
			job:  onFailure(3),
			pods: []*corev1.Pod{restarted("a", corev1.PodRunning, 2), restarted("b", corev1.PodPending, 1)},
			want: true,
		},
		{
			name: "with backoffLimit zero the first restart fails the job",
			job:  onFailure(0),
			pods: []*corev1.Pod{restarted("a", corev1.PodRunning, 1)},
			want: true,
		},
		{
			name: "with backoffLimit zero no restart keeps the job running",
			job:  onFailure(0),
			pods: []*corev1.Pod{restarted("a", corev1.PodRunning, 0)},
		},
		{
			name: "restarts of finished pods no longer count",
			job:  onFailure(3),
			pods: []*corev1.Pod{restarted("a", corev1.PodSucceeded, 5), restarted("b", corev1.PodFailed, 5)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pastBackoffLimitOnFailure(tc.job, tc.pods); got != tc.want {
				t.Errorf("pastBackoffLimitOnFailure = %v, want %v", got, tc.want)
			}
		})
	}
}
