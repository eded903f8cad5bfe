package webhook

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// cronRuns tells the run a FleetCronJob creates for a slot from any other object. A run
// carries its cron's template unchanged, and that template passed the same dry-run when
// the cron was written (under the run's name, for a FleetJob): the members' API servers
// judge a Job by its name and template alone, so dry-running it again for every run
// repeats a call that cannot answer differently. At 500 crons on one slot, that call was
// most of the time the runs waited for. Everything that can change between slots (the
// namespace's Pod Security level, a reserved namespace, a WorkloadSpread's subsets) is
// still checked on every run.
//
// Who creates the run does not matter: anyone may create an object that looks like a
// run, but only one whose template the cron's admission already judged passes unjudged.
type cronRuns struct {
	// cache reads the FleetCronJobs, which the hub's cron controller already watches.
	cache client.Reader
}

// owner returns the FleetCronJob that controls obj, if it still exists as that object.
func (c cronRuns) owner(ctx context.Context, obj metav1.Object) *musterv1.FleetCronJob {
	ref := metav1.GetControllerOf(obj)
	if c.cache == nil || ref == nil || ref.Kind != "FleetCronJob" || ref.APIVersion != musterv1.GroupVersion.String() {
		return nil
	}
	var cj musterv1.FleetCronJob
	if err := c.cache.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, &cj); err != nil || cj.UID != ref.UID {
		return nil
	}
	return &cj
}

// judgedFleetJob says whether fj is a run of its cron whose Job template was judged with
// the cron: named for its slot, with the cron's job template unchanged.
func (c cronRuns) judgedFleetJob(ctx context.Context, fj *musterv1.FleetJob) bool {
	cj := c.owner(ctx, fj)
	return cj != nil && isFleetJobRun(cj, fj)
}

// judgedBroadcastJob says whether job is a run of its cron with the cron's pod template
// unchanged.
func (c cronRuns) judgedBroadcastJob(ctx context.Context, job *musterv1.BroadcastJob) bool {
	cj := c.owner(ctx, job)
	return cj != nil && isBroadcastJobRun(cj, job)
}

// isFleetJobRun says whether fj is named as cj's run of the slot it is annotated with and
// carries cj's job template unchanged.
func isFleetJobRun(cj *musterv1.FleetCronJob, fj *musterv1.FleetJob) bool {
	slot, err := time.Parse(time.RFC3339, fj.Annotations[musterv1.ScheduledTimeAnnotation])
	return err == nil && cj.Spec.JobTemplate != nil && cronapi.NamedFor(cj, fj.Name, slot) &&
		equality.Semantic.DeepEqual(cj.Spec.JobTemplate.Spec.Template, fj.Spec.Template)
}

// isBroadcastJobRun says whether job carries cj's BroadcastJob pod template unchanged (a
// pod template is judged without a name).
func isBroadcastJobRun(cj *musterv1.FleetCronJob, job *musterv1.BroadcastJob) bool {
	return cj.Spec.BroadcastJobTemplate != nil && equality.Semantic.DeepEqual(cj.Spec.BroadcastJobTemplate.Spec.Template, job.Spec.Template)
}
