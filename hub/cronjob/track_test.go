package cronjob

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestLeftActive(t *testing.T) {
	run := func(name string, finished bool) child {
		return child{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}, finished: finished}
	}
	ref := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Name: name, UID: types.UID(name)}
	}
	for _, tc := range []struct {
		name              string
		active            []corev1.ObjectReference
		children          []child
		finished, missing []string
	}{
		{"nothing listed", nil, []child{run("a", true)}, nil, nil},
		{"still running", []corev1.ObjectReference{ref("a")}, []child{run("a", false)}, nil, nil},
		{"finished since", []corev1.ObjectReference{ref("a"), ref("b")}, []child{run("a", true), run("b", false)}, []string{"a"}, nil},
		{"gone", []corev1.ObjectReference{ref("a"), ref("b")}, []child{run("b", false)}, nil, []string{"a"}},
		{"a new run of the same name is another run", []corev1.ObjectReference{ref("a")},
			[]child{{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "a2"}}}}, nil, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			finished, missing := leftActive(tc.active, tc.children)
			var gotFinished, gotMissing []string
			for _, c := range finished {
				gotFinished = append(gotFinished, c.obj.GetName())
			}
			for _, r := range missing {
				gotMissing = append(gotMissing, r.Name)
			}
			if !slices.Equal(gotFinished, tc.finished) || !slices.Equal(gotMissing, tc.missing) {
				t.Errorf("finished %v missing %v, want %v %v", gotFinished, gotMissing, tc.finished, tc.missing)
			}
		})
	}
}

func TestTrackMovesLastScheduleTimeOnlyToASlotARunIsNamedFor(t *testing.T) {
	cj := &musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", UID: "u1"}}
	now := time.Date(2026, 11, 26, 9, 0, 30, 0, time.UTC)
	slot, next := now.Truncate(time.Minute), now.Truncate(time.Minute).Add(time.Minute)
	last := slot.Add(-time.Hour)
	run := func(name string, scheduled time.Time) child {
		return child{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}, scheduled: scheduled, slotKnown: true, finished: true}
	}
	for _, tc := range []struct {
		name     string
		children []child
		want     time.Time
	}{
		{"no runs", nil, last},
		{"the run of a slot not recorded", []child{run(cronapi.ChildName(cj, slot), slot)}, slot},
		{"under its alternate name", []child{run(cronapi.AlternateChildName(cj, slot), slot)}, slot},
		{"a replica whose clock runs ahead ran the next slot", []child{run(cronapi.ChildName(cj, next), next)}, next},
		{"an older run never moves it back", []child{run(cronapi.ChildName(cj, last.Add(-time.Hour)), last.Add(-time.Hour))}, last},
		{"an annotation rewritten to a later slot", []child{run(cronapi.ChildName(cj, slot), next)}, last},
		{"an annotation years ahead", []child{run(cronapi.ChildName(cj, slot), slot.AddDate(100, 0, 0))}, last},
		{"a run named for a slot years ahead", []child{run(cronapi.ChildName(cj, slot.AddDate(100, 0, 0)), slot.AddDate(100, 0, 0))}, last},
		{"a run not named for a slot", []child{run("nightly-manual", slot)}, last},
		{"a run without a slot", []child{{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: cronapi.ChildName(cj, slot)}}, scheduled: slot}}, last},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := &musterv1.FleetCronJobStatus{LastScheduleTime: &metav1.Time{Time: last}}
			track(status, cj, tc.children, next)
			if got := status.LastScheduleTime.Time; !got.Equal(tc.want) {
				t.Errorf("lastScheduleTime %v, want %v", got, tc.want)
			}
		})
	}
}
