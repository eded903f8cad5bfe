//go:build e2e

package fleetcronjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

const ns = "default"

func newCron(name, schedule string) *musterv1.FleetCronJob {
	return &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetCronJobSpec{
			Schedule: schedule,
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: musterv1.FleetJobSpec{
				Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided},
				Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
					Completions: ptr.To[int32](4), Parallelism: ptr.To[int32](2),
					CompletionMode: ptr.To(batchv1.IndexedCompletion),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
					}},
				}},
			}},
		},
	}
}

func TestAdmissionRefusesSchedulesCELCannotCheck(t *testing.T) {
	cases := []struct {
		name, schedule, tz, want string
	}{
		{"every", "@every 5m", "", "spec.schedule: Invalid value: \"@every 5m\": @every is not supported"},
		{"bad-minute", "61 * * * *", "", "spec.schedule: Invalid value"},
		{"unknown-zone", "0 * * * *", "Mars/Olympus", "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cj := newCron("bad-"+tc.name, tc.schedule)
			if tc.tz != "" {
				cj.Spec.TimeZone = ptr.To(tc.tz)
			}
			err := fleet.Hub.Client.Create(t.Context(), cj)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// A good one passes.
	ok := newCron("good", "0 3 * * *")
	ok.Spec.TimeZone = ptr.To("Europe/Berlin")
	if err := fleet.Hub.Client.Create(t.Context(), ok); err != nil {
		t.Fatalf("a valid FleetCronJob was refused: %v", err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), ok) })
}

// every is a schedule with a slot each period, which must divide a minute. It names
// seconds, which the local fleet's hub accepts (framework.BuildTags, api/cronjob), so the
// tests wait seconds for a slot where a five-field schedule would make them wait minutes.
func every(period time.Duration) string {
	return fmt.Sprintf("*/%d * * * * *", int(period/time.Second))
}

// everySlotPeriod is the period of the cron that must complete a run in each slot: longer
// than a run takes (its pods last a second).
const everySlotPeriod = 15 * time.Second

func TestEverySlotARunCompletesInBothMembers(t *testing.T) {
	t.Parallel()
	cj := newCron("periodic", every(everySlotPeriod))
	if err := fleet.Hub.Client.Create(t.Context(), cj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), cj) })
	done := map[string]*musterv1.FleetJob{}
	err := framework.Until(t.Context(), 4*time.Minute, "three runs complete", func(ctx context.Context) (bool, string, error) {
		var list musterv1.FleetJobList
		if err := fleet.Hub.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error(), nil
		}
		var state []string
		for i := range list.Items {
			fj := &list.Items[i]
			if !metav1.IsControlledBy(fj, cj) && !strings.HasPrefix(fj.Name, cj.Name+"-") {
				continue
			}
			state = append(state, fmt.Sprintf("%s:%s", fj.Name, fj.Status.Phase))
			if meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete) {
				done[fj.Name] = fj.DeepCopy()
			}
		}
		return len(done) >= 3, strings.Join(state, " "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, fj := range done {
		slot, err := time.Parse(time.RFC3339, fj.Annotations[musterv1.ScheduledTimeAnnotation])
		if err != nil || cronapi.ChildName(cj, slot) != name {
			t.Errorf("run %s: scheduled-time %q does not match its name", name, fj.Annotations[musterv1.ScheduledTimeAnnotation])
		}
		if len(fj.Status.Clusters) != 2 || fj.Status.Succeeded != 4 {
			t.Errorf("run %s: %d clusters, %d succeeded; want both members and 4", name, len(fj.Status.Clusters), fj.Status.Succeeded)
		}
		for _, c := range fj.Status.Clusters {
			if c.Phase != musterv1.JobComplete {
				t.Errorf("run %s: cluster %s %s", name, c.ClusterName, c.Phase)
			}
		}
		// A run starts within a couple of seconds of its slot.
		if lag := fj.CreationTimestamp.Sub(slot); lag > 3*time.Second {
			t.Errorf("run %s created %s after its slot", name, lag)
		}
	}
	got := &musterv1.FleetCronJob{}
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(cj), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.LastScheduleTime == nil || got.Status.NextScheduleTime == nil || got.Status.LastSuccessfulTime == nil {
		t.Errorf("status %+v: want last, next and last successful times", got.Status)
	}
}
