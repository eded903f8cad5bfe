package cronjob_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/cronjob"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var (
	env *envtest.Environment
	// Each test sets the clock (see newFixture) and moves it forward.
	clock = clocktesting.NewFakeClock(time.Now())
	// cached is the manager's client, with the controller's indexes, for tests that call
	// Reconcile themselves.
	cached client.Client
	// asked counts the events the controller records, also those the API server refuses.
	asked = &askedEvents{counts: map[string]int{}}
)

// TestMain runs the FleetCronJob controller, on a clock the tests move, against a real API
// server. Nothing runs the children: tests finish them by writing their status.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(mgr ctrl.Manager) error {
		cached = mgr.GetClient()
		asked.EventRecorder = mgr.GetEventRecorder("test")
		return (&cronjob.Reconciler{Client: mgr.GetClient(), Recorder: asked, Clock: clock}).SetupWithManager(mgr)
	}))
}

// askedEvents passes events on to the manager's recorder and counts them by namespace and
// reason: an event the API server refuses (in a namespace being deleted) leaves no other
// trace a test can read.
type askedEvents struct {
	events.EventRecorder
	mu     sync.Mutex
	counts map[string]int
}

func (a *askedEvents) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if m, err := meta.Accessor(regarding); err == nil {
		a.mu.Lock()
		a.counts[m.GetNamespace()+"/"+reason]++
		a.mu.Unlock()
	}
	a.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// count is how many events of reason the controller recorded in namespace.
func (a *askedEvents) count(namespace, reason string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.counts[namespace+"/"+reason]
}

type fixture struct {
	t  *testing.T
	ns string
	// m1 is the first whole minute after the test started: the first slot of "* * * * *".
	m1 time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	// The API server stamps objects with the real time and the controller compares them
	// with the fake one: start the fake clock a little ahead of the real one, in the same
	// minute, so a cron created now has no slot before the test moves the clock. Near the
	// end of a minute, wait for the next one rather than race it.
	now := time.Now()
	if now.Second() >= 50 {
		time.Sleep(time.Until(now.Truncate(time.Minute).Add(time.Minute + time.Second)))
		now = time.Now()
	}
	base := now.Truncate(time.Minute).Add(57 * time.Second)
	clock.SetTime(base)
	return &fixture{t: t, ns: env.Namespace(t), m1: base.Truncate(time.Minute).Add(time.Minute)}
}

// nextHour is the first whole hour after the fake clock's start, which lies in the minute
// before m1: m1 itself when m1 is on the hour.
func (f *fixture) nextHour() time.Time {
	return f.m1.Add(-time.Minute).Truncate(time.Hour).Add(time.Hour)
}

func fleetJobTemplate() *musterv1.FleetJobTemplateSpec {
	return &musterv1.FleetJobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nightly"}},
		Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](1),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}},
		}}},
	}
}

// cron creates a FleetCronJob of a FleetJob.
func (f *fixture) cron(schedule string, mutate ...func(*musterv1.FleetCronJob)) *musterv1.FleetCronJob {
	f.t.Helper()
	cj := &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: f.ns},
		Spec:       musterv1.FleetCronJobSpec{Schedule: schedule, JobTemplate: fleetJobTemplate()},
	}
	for _, m := range mutate {
		m(cj)
	}
	if err := env.Client.Create(f.t.Context(), cj); err != nil {
		f.t.Fatal(err)
	}
	// The next tests move the clock: a cron left behind would run their slots too, and
	// count in the metrics they read. Deleted before anything else the test set up goes
	// (cleanups run last first), such as what keeps its runs from being deleted.
	f.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), cj) })
	return cj
}

func (f *fixture) get(cj *musterv1.FleetCronJob) *musterv1.FleetCronJob {
	f.t.Helper()
	out := &musterv1.FleetCronJob{}
	if err := env.Client.Get(f.t.Context(), client.ObjectKeyFromObject(cj), out); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// fleetJobs lists the FleetJobs in the namespace by name.
func (f *fixture) fleetJobs() map[string]*musterv1.FleetJob {
	f.t.Helper()
	var list musterv1.FleetJobList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*musterv1.FleetJob{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}

func (f *fixture) eventually(what string, cond func() (bool, string)) {
	f.t.Helper()
	envtest.Eventually(f.t, what, cond)
}

// waitChildren waits until exactly the named FleetJobs exist.
func (f *fixture) waitChildren(names ...string) {
	f.t.Helper()
	f.eventually(fmt.Sprintf("children %v", names), func() (bool, string) {
		got := f.fleetJobs()
		if len(got) != len(names) {
			return false, fmt.Sprint(keys(got))
		}
		for _, n := range names {
			if got[n] == nil {
				return false, fmt.Sprint(keys(got))
			}
		}
		return true, ""
	})
}

func keys(m map[string]*musterv1.FleetJob) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// tick moves the clock by d and makes the controller look.
func (f *fixture) tick(cj *musterv1.FleetCronJob, d time.Duration) {
	f.t.Helper()
	f.at(cj, clock.Now().Add(d))
}

// at sets the clock and makes the controller look (its timers run on the real clock, so
// it would otherwise not notice).
func (f *fixture) at(cj *musterv1.FleetCronJob, t time.Time) {
	f.t.Helper()
	clock.SetTime(t)
	f.update(cj, func(cj *musterv1.FleetCronJob) {
		if cj.Annotations == nil {
			cj.Annotations = map[string]string{}
		}
		cj.Annotations["tick"] = fmt.Sprint(time.Now().UnixNano())
	})
}

// finish marks a child FleetJob Complete or Failed at the clock's now.
func (f *fixture) finish(name string, ok bool) {
	f.t.Helper()
	fj := f.fleetJobs()[name]
	if fj == nil {
		f.t.Fatalf("no child %s", name)
	}
	t, reason := musterv1.FleetJobComplete, "ShardsCompleted"
	if !ok {
		t, reason = musterv1.FleetJobFailed, "ShardFailed"
	}
	meta.SetStatusCondition(&fj.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: "done"})
	now := metav1.NewTime(clock.Now())
	fj.Status.CompletionTime = &now
	if err := env.Client.Status().Update(f.t.Context(), fj); err != nil {
		f.t.Fatal(err)
	}
}

// slotName is the child name for the slot at t.
func slotName(t time.Time) string { return fmt.Sprintf("nightly-%d", t.Unix()/60) }

func (f *fixture) expectEvent(reason string) {
	f.t.Helper()
	env.ExpectEvent(f.t, f.ns, "", reason)
}

// update changes the cron's spec as a user would.
func (f *fixture) update(cj *musterv1.FleetCronJob, mutate func(*musterv1.FleetCronJob)) {
	f.t.Helper()
	cur := f.get(cj)
	patch := client.MergeFrom(cur.DeepCopy())
	mutate(cur)
	if err := env.Client.Patch(f.t.Context(), cur, patch); err != nil {
		f.t.Fatal(err)
	}
}

// waitObserved waits until the controller has seen the cron's current spec: its
// ScheduleValid condition is of that generation. A tick right after a spec change could
// otherwise be served from a cache that still holds the old spec.
func (f *fixture) waitObserved(cj *musterv1.FleetCronJob) {
	f.t.Helper()
	f.eventually("the controller to observe the spec", func() (bool, string) {
		cur := f.get(cj)
		c := meta.FindStatusCondition(cur.Status.Conditions, musterv1.FleetCronJobScheduleValid)
		return c != nil && c.ObservedGeneration == cur.Generation, fmt.Sprintf("generation %d, condition %+v", cur.Generation, c)
	})
}

// waitNext waits until the controller has looked at the cron on the clock's current time:
// it then shows next as its nextScheduleTime, and whatever it decided for the slots up to
// now has been done.
func (f *fixture) waitNext(cj *musterv1.FleetCronJob, next time.Time) {
	f.t.Helper()
	f.eventually("nextScheduleTime "+next.Format(time.RFC3339), func() (bool, string) {
		n := f.get(cj).Status.NextScheduleTime
		return n != nil && n.Time.Equal(next), fmt.Sprint(n)
	})
}

// keeps checks that exactly the named FleetJobs exist, and still do after a pass of the
// controller over cj at the clock's now (see pass).
func (f *fixture) keeps(cj *musterv1.FleetCronJob, names ...string) {
	f.t.Helper()
	f.waitChildren(names...)
	f.pass(cj)
	f.exactly(names...)
}

// exactly checks, without waiting, that exactly the named FleetJobs exist.
func (f *fixture) exactly(names ...string) {
	f.t.Helper()
	got := f.fleetJobs()
	ok := len(got) == len(names)
	for _, n := range names {
		ok = ok && got[n] != nil
	}
	if !ok {
		f.t.Fatalf("runs %v, want exactly %v", keys(got), names)
	}
}

// pass runs one pass of the controller's Reconcile over cj at the clock's now, from the
// manager's cache once it shows the cron and the namespace's FleetJobs as the API server
// does, and returns when the pass has acted, written its status and asked for its events.
// What a test asserts after it is what the controller decides at this time, not what it
// has not got round to yet.
func (f *fixture) pass(cj *musterv1.FleetCronJob) ctrl.Result {
	f.t.Helper()
	f.eventually("the cache to show the cron and its runs", func() (bool, string) { return f.cacheCaughtUp(cj) })
	r := &cronjob.Reconciler{Client: cached, APIReader: env.Client, Recorder: asked, Clock: clock}
	res, err := r.Reconcile(f.t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(cj)})
	if err != nil {
		f.t.Fatalf("a pass over %s: %v", cj.Name, err)
	}
	return res
}

// cacheCaughtUp says whether the manager's cache holds the cron and the namespace's
// FleetJobs at least as new as the API server's.
func (f *fixture) cacheCaughtUp(cj *musterv1.FleetCronJob) (bool, string) {
	ctx := f.t.Context()
	var live, seen musterv1.FleetCronJob
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cj), &live); err != nil {
		return false, err.Error()
	}
	if err := cached.Get(ctx, client.ObjectKeyFromObject(cj), &seen); err != nil {
		return false, err.Error()
	}
	if !atLeast(seen.ResourceVersion, live.ResourceVersion) {
		return false, fmt.Sprintf("cron at %s in the cache, %s in the API server", seen.ResourceVersion, live.ResourceVersion)
	}
	var liveRuns, seenRuns musterv1.FleetJobList
	if err := env.Client.List(ctx, &liveRuns, client.InNamespace(f.ns)); err != nil {
		return false, err.Error()
	}
	if err := cached.List(ctx, &seenRuns, client.InNamespace(f.ns)); err != nil {
		return false, err.Error()
	}
	versions := map[string]string{}
	for _, fj := range seenRuns.Items {
		versions[fj.Name] = fj.ResourceVersion
	}
	for _, fj := range liveRuns.Items {
		if v, ok := versions[fj.Name]; !ok || !atLeast(v, fj.ResourceVersion) {
			return false, fmt.Sprintf("run %s at %q in the cache, %s in the API server", fj.Name, v, fj.ResourceVersion)
		}
	}
	return len(seenRuns.Items) == len(liveRuns.Items), fmt.Sprintf("%d runs in the cache, %d in the API server", len(seenRuns.Items), len(liveRuns.Items))
}

func atLeast(rv, than string) bool {
	c, err := resourceversion.CompareResourceVersion(rv, than)
	return err == nil && c >= 0
}

// child creates a FleetJob in the namespace, owned by cj when it is not nil.
func (f *fixture) child(name string, owner *musterv1.FleetCronJob, slot time.Time) *musterv1.FleetJob {
	f.t.Helper()
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns,
			Annotations: map[string]string{musterv1.ScheduledTimeAnnotation: slot.UTC().Format(time.RFC3339)}},
		Spec: fleetJobTemplate().Spec,
	}
	if owner != nil {
		fj.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, musterv1.GroupVersion.WithKind("FleetCronJob"))}
	}
	if err := env.Client.Create(f.t.Context(), fj); err != nil {
		f.t.Fatal(err)
	}
	return fj
}

func (f *fixture) eventReasons() []string {
	f.t.Helper()
	reasons, err := env.EventReasons(f.ns, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return reasons
}
