package cronjob

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestDecideTiming(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 30, 0, time.UTC)
	cron := func(schedule string, mutate ...func(*musterv1.FleetCronJob)) *musterv1.FleetCronJob {
		cj := &musterv1.FleetCronJob{Spec: musterv1.FleetCronJobSpec{Schedule: schedule}}
		for _, m := range mutate {
			m(cj)
		}
		return cj
	}
	suspended := func(cj *musterv1.FleetCronJob) { cj.Spec.Suspend = ptr.To(true) }
	for _, tc := range []struct {
		name        string
		cj          *musterv1.FleetCronJob
		stopped     metav1.ConditionStatus // "" when the cron runs
		horizon     time.Time
		wantMessage string
	}{
		{"runs", cron("* * * * *"), "", now.Truncate(time.Minute).Add(time.Minute), ""},
		{"suspended: valid, no run", cron("*/5 * * * *", suspended), metav1.ConditionTrue, time.Date(2026, 11, 26, 9, 5, 0, 0, time.UTC), scheduleValidMessage},
		{"does not parse", cron("61 * * * *"), metav1.ConditionFalse, now, "invalid schedule"},
		{"does not parse and suspended", cron("@every 5m", suspended), metav1.ConditionFalse, now, "@every is not supported"},
		{"no next slot: the horizon is now", cron("0 0 29 2 *", func(cj *musterv1.FleetCronJob) { cj.Spec.TimeZone = ptr.To("UTC") }), "", time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decideTiming(tc.cj, now)
			switch {
			case tc.stopped == "" && got.stopped != nil:
				t.Errorf("stopped %+v, want the cron to run", *got.stopped)
			case tc.stopped != "" && (got.stopped == nil || got.stopped.status != tc.stopped || !contains(got.stopped.message, tc.wantMessage)):
				t.Errorf("stopped %+v, want %s with %q", got.stopped, tc.stopped, tc.wantMessage)
			}
			if !got.horizon.Equal(tc.horizon) {
				t.Errorf("horizon %v, want %v", got.horizon, tc.horizon)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestSetValidTellsOnlyNews(t *testing.T) {
	invalid := validity{metav1.ConditionFalse, musterv1.FleetCronJobReasonInvalidSchedule, "bad"}
	for _, tc := range []struct {
		name   string
		before []validity
		set    validity
		news   bool
	}{
		{"valid is never news", nil, scheduleValid, false},
		{"first invalid", nil, invalid, true},
		{"invalid again, alike", []validity{invalid}, invalid, false},
		{"invalid for another reason", []validity{invalid}, validity{metav1.ConditionFalse, invalid.reason, "worse"}, true},
		{"invalid after valid", []validity{scheduleValid}, invalid, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := &musterv1.FleetCronJobStatus{}
			for _, v := range tc.before {
				setValid(status, 1, v)
			}
			if got := setValid(status, 2, tc.set); got != tc.news {
				t.Errorf("news %v, want %v", got, tc.news)
			}
			if c := status.Conditions[0]; c.ObservedGeneration != 2 || c.Message != tc.set.message {
				t.Errorf("condition %+v, want generation 2 and message %q", c, tc.set.message)
			}
		})
	}
}

func TestBeyondHistory(t *testing.T) {
	run := func(name string, finished, succeeded bool) child {
		return child{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}, finished: finished, succeeded: succeeded}
	}
	deleting := run("deleting", true, true)
	deleting.obj.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
	recorded := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	// The newest run's slot is after the one the stored status records (the write that
	// records it has not landed): it is kept, whatever the limits.
	unrecorded := run("ok-unrecorded", true, true)
	unrecorded.scheduled = recorded.Add(time.Minute)
	children := []child{run("ok1", true, true), run("bad1", true, false), run("ok2", true, true), deleting, run("running", false, false), run("bad2", true, false), run("ok3", true, true), unrecorded}
	for _, tc := range []struct {
		name              string
		succeeded, failed *int32
		want              []string
	}{
		{"defaults keep 3 and 1", nil, nil, []string{"bad1"}},
		{"keep 1 and 0", ptr.To[int32](1), ptr.To[int32](0), []string{"ok1", "ok2", "bad1", "bad2"}},
		{"keep 0: every run goes but the one whose slot is not recorded", ptr.To[int32](0), ptr.To[int32](0), []string{"ok1", "ok2", "ok3", "bad1", "bad2"}},
		{"keep more than there are", ptr.To[int32](10), ptr.To[int32](10), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cj := &musterv1.FleetCronJob{
				Spec:   musterv1.FleetCronJobSpec{SuccessfulJobsHistoryLimit: tc.succeeded, FailedJobsHistoryLimit: tc.failed},
				Status: musterv1.FleetCronJobStatus{LastScheduleTime: &metav1.Time{Time: recorded}},
			}
			var got []string
			for _, c := range beyondHistory(cj, children) {
				got = append(got, c.obj.GetName())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("beyond history %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDecideSlot(t *testing.T) {
	cj := &musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "u1"}}
	slot := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	run := func(name string, finished bool) child {
		return child{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}, finished: finished}
	}
	earlier := []child{run("nightly-1", true), run("nightly-2", false), run("nightly-3", false)}
	for _, tc := range []struct {
		name     string
		policy   musterv1.ConcurrencyPolicy
		children []child
		ran      bool
		blocking int
		replace  []string
	}{
		{"Allow creates beside active runs", musterv1.ConcurrencyAllow, earlier, false, 0, nil},
		{"Forbid waits for the active runs", musterv1.ConcurrencyForbid, earlier, false, 2, nil},
		{"Forbid with none active creates", musterv1.ConcurrencyForbid, earlier[:1], false, 0, nil},
		{"Replace stops the active runs", musterv1.ConcurrencyReplace, earlier, false, 0, []string{"nightly-2", "nightly-3"}},
		{"the slot's run exists", musterv1.ConcurrencyForbid, append(earlier, run(cronapi.ChildName(cj, slot), false)), true, 0, nil},
		{"under its alternate name", musterv1.ConcurrencyReplace, append(earlier, run(cronapi.AlternateChildName(cj, slot), true)), true, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cj.DeepCopy()
			c.Spec.ConcurrencyPolicy = tc.policy
			got := decideSlot(c, tc.children, slot)
			var replace []string
			for _, r := range got.replace {
				replace = append(replace, r.obj.GetName())
			}
			if got.ran != tc.ran || got.blocking != tc.blocking || !slices.Equal(replace, tc.replace) {
				t.Errorf("decideSlot = ran %v blocking %d replace %v; want %v %d %v", got.ran, got.blocking, replace, tc.ran, tc.blocking, tc.replace)
			}
		})
	}
}
