package attacks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// Names is what the name rows need of a fleet.
type Names struct {
	Hub client.Client
	// FleetJob is a valid FleetJob placed whole on Cluster whose one pod finishes in seconds.
	FleetJob func(namespace, name string) *musterv1.FleetJob
	Cluster  string
	// Namespace is the hub namespace of the cron row, which must exist.
	Namespace string
	// Prefix starts the hub namespaces the namesake row creates.
	Prefix string
}

// NameRows are the rows of names one tenant could take from another: before names were
// derived with a hash, FleetJob b-c in namespace x and FleetJob c in x-b shared a Work,
// and a stranger could hold a FleetCronJob's next run's name. Both rows run to completion.
func NameRows(n Names) []Check {
	return []Check{
		{Name: "FleetJob b-c in namespace x and FleetJob c in namespace x-b -> both complete", Run: n.namesakesBothComplete},
		{Name: "FleetCronJob whose next run's name a stranger's FleetJob holds -> runs under its alternate name", Run: n.squattedRunName},
	}
}

// created creates objs in order and returns a function that deletes those it created.
func (n Names) created(ctx context.Context, objs ...client.Object) (func(), error) {
	var made []client.Object
	remove := func() {
		for _, obj := range made {
			_ = n.Hub.Delete(context.WithoutCancel(ctx), obj)
		}
	}
	for _, obj := range objs {
		if err := n.Hub.Create(ctx, obj); err != nil {
			return remove, fmt.Errorf("creating %s: %w", obj.GetName(), err)
		}
		made = append(made, obj)
	}
	return remove, nil
}

func (n Names) namesakesBothComplete(ctx context.Context) error {
	x := n.Prefix + "-x"
	jobs := []*musterv1.FleetJob{n.FleetJob(x, "b-c"), n.FleetJob(x+"-b", "c")}
	for _, fj := range jobs {
		if err := client.IgnoreAlreadyExists(n.Hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fj.Namespace}})); err != nil {
			return err
		}
	}
	remove, err := n.created(ctx, jobs[0], jobs[1])
	defer remove()
	if err != nil {
		return err
	}
	var errs []error
	for _, fj := range jobs {
		done, err := WaitComplete(ctx, n.Hub, client.ObjectKeyFromObject(fj), 2*time.Minute)
		if err != nil {
			return err
		}
		if done.Status.Succeeded != 1 || len(done.Status.Clusters) != 1 || done.Status.Clusters[0].ClusterName != n.Cluster {
			errs = append(errs, fmt.Errorf("FleetJob %s/%s: status %+v, want 1 succeeded in %s", fj.Namespace, fj.Name, done.Status, n.Cluster))
		}
	}
	var one, other musterv1.WorkList
	works := client.InNamespace(musterv1.MemberNamespace(n.Cluster))
	if err := n.Hub.List(ctx, &one, works, client.MatchingLabels{musterv1.FleetJobNameLabel: "b-c", musterv1.FleetJobNamespaceLabel: x}); err != nil {
		return err
	}
	if err := n.Hub.List(ctx, &other, works, client.MatchingLabels{musterv1.FleetJobNameLabel: "c", musterv1.FleetJobNamespaceLabel: x + "-b"}); err != nil {
		return err
	}
	if len(one.Items) != 1 || len(other.Items) != 1 || one.Items[0].Name == other.Items[0].Name {
		errs = append(errs, fmt.Errorf("the FleetJobs' Works %v and %v, want one each under different names", workNames(one), workNames(other)))
	}
	return errors.Join(errs...)
}

func workNames(l musterv1.WorkList) []string {
	var out []string
	for _, w := range l.Items {
		out = append(out, w.Name)
	}
	return out
}

// squattedRunName: a stranger's FleetJobs hold the names of the cron's next slots
// (<cron>-<unix minutes>, which anyone can work out) before the cron exists. The cron's
// first run starts on time under its alternate name, says so in a ChildNameTaken warning,
// and completes; the squatters stay as they were.
func (n Names) squattedRunName(ctx context.Context) error {
	schedule, period := squatSchedule()
	next := time.Now().Truncate(period).Add(period)
	cj := &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "squatted", Namespace: n.Namespace},
		Spec: musterv1.FleetCronJobSpec{Schedule: schedule,
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: n.FleetJob(n.Namespace, "child").Spec}},
	}
	var squatters []*musterv1.FleetJob
	for i := range 3 {
		slot := next.Add(time.Duration(i) * period)
		squatters = append(squatters, n.FleetJob(n.Namespace, cronapi.ChildName(cj, slot)))
	}
	remove, err := n.created(ctx, squatters[0], squatters[1], squatters[2], cj)
	defer remove()
	if err != nil {
		return err
	}
	run, err := FirstRun(ctx, n.Hub, cj, 2*time.Minute)
	if err != nil {
		return err
	}
	slot, err := time.Parse(time.RFC3339, run.Annotations[musterv1.ScheduledTimeAnnotation])
	if err != nil {
		return fmt.Errorf("run %s has no scheduled time: %w", run.Name, err)
	}
	var errs []error
	if want := cronapi.AlternateChildName(cj, slot); run.Name != want {
		errs = append(errs, fmt.Errorf("run %s for %s, want the alternate name %s", run.Name, slot, want))
	}
	if lag := run.CreationTimestamp.Sub(slot); lag > 3*time.Second {
		errs = append(errs, fmt.Errorf("run %s created %s after its slot", run.Name, lag))
	}
	want := fmt.Sprintf("FleetJob %s is not this FleetCronJob's: the run for %s is named %s", cronapi.ChildName(cj, slot), slot.UTC().Format(time.RFC3339), run.Name)
	errs = append(errs, framework.Until(ctx, 30*time.Second, "a ChildNameTaken event", func(ctx context.Context) (bool, string, error) {
		notes, err := eventNotes(ctx, n.Hub, cj, musterv1.FleetCronJobReasonChildNameTaken)
		return slices.Contains(notes, want), fmt.Sprintf("%q (%v), want one saying %q", notes, err, want), nil
	}))
	if _, err := WaitComplete(ctx, n.Hub, client.ObjectKeyFromObject(run), 2*time.Minute); err != nil {
		errs = append(errs, err)
	}
	for _, s := range squatters {
		var got musterv1.FleetJob
		if err := n.Hub.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
			errs = append(errs, fmt.Errorf("squatter %s: %w", s.Name, err))
		} else if got.UID != s.UID || len(got.OwnerReferences) != 0 || got.DeletionTimestamp != nil {
			errs = append(errs, fmt.Errorf("squatter %s was touched: %+v", s.Name, got.ObjectMeta))
		}
	}
	return errors.Join(errs...)
}

// FirstRun waits for the first FleetJob cj controls.
func FirstRun(ctx context.Context, hub client.Client, cj *musterv1.FleetCronJob, timeout time.Duration) (*musterv1.FleetJob, error) {
	var run *musterv1.FleetJob
	err := framework.Until(ctx, timeout, "the FleetCronJob's first run", func(ctx context.Context) (bool, string, error) {
		var list musterv1.FleetJobList
		if err := hub.List(ctx, &list, client.InNamespace(cj.Namespace)); err != nil {
			return false, err.Error(), nil
		}
		for i := range list.Items {
			if metav1.IsControlledBy(&list.Items[i], cj) {
				run = &list.Items[i]
				return true, "", nil
			}
		}
		return false, "no run yet", nil
	})
	return run, err
}

// eventNotes lists the notes of the hub's events about obj with reason.
func eventNotes(ctx context.Context, hub client.Client, obj client.Object, reason string) ([]string, error) {
	var events eventsv1.EventList
	if err := hub.List(ctx, &events, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range events.Items {
		if e.Regarding.Name == obj.GetName() && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out, nil
}

// WaitComplete waits until the FleetJob key is Complete and returns it.
func WaitComplete(ctx context.Context, hub client.Client, key client.ObjectKey, timeout time.Duration) (*musterv1.FleetJob, error) {
	var fj musterv1.FleetJob
	err := framework.Until(ctx, timeout, "FleetJob "+key.Name+" to complete", func(ctx context.Context) (bool, string, error) {
		if err := hub.Get(ctx, key, &fj); err != nil {
			return false, err.Error(), nil
		}
		if meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobFailed) {
			return false, "", fmt.Errorf("FleetJob %s failed: %v", key, fj.Status.Conditions)
		}
		return meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete),
			fmt.Sprintf("%s succeeded=%d %v", fj.Status.Phase, fj.Status.Succeeded, fj.Status.Conditions), nil
	})
	return &fj, err
}

// squatSchedule is the squatted cron's schedule and its period: every minute, or every
// 10 seconds where the hub under test takes a seconds field (the local fleet's, built with
// the e2e tag as this package then is; see api/cronjob), so the row waits less for a slot.
func squatSchedule() (string, time.Duration) {
	if cronapi.SlotResolution < time.Minute {
		return "*/10 * * * * *", 10 * time.Second
	}
	return "*/1 * * * *", time.Minute
}
