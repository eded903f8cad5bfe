package robustness_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/api/indexset"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/fleetjob"
	"github.com/musterhq/muster/hub/internal/failover"
	"github.com/musterhq/muster/internal/testing/envtest"
	"github.com/musterhq/muster/placement/clusters"
)

var (
	env *envtest.Environment
	// make test runs the fixed seeds 1..seeds; make chaos gives as many as it is asked,
	// from first; a failing seed is replayed with -robustness.first=<seed> -robustness.seeds=1.
	seeds = flag.Int("robustness.seeds", 6, "how many seeds to run")
	first = flag.Int64("robustness.first", 1, "the first seed")
)

func TestMain(m *testing.M) {
	os.Exit(envtest.MainWith(m, &env, nil))
}

// TestFleetJobsRunEachIndexOnceUnderFaults runs FleetJobs of every placement mode through
// the hub's FleetJob controller while its writes fail before and after they are applied,
// its cache lags the Works it writes, its manager is killed and started again (losing
// every in-memory state), and, on some seeds, a member is removed from the fleet with or
// without its Works. Then the faults stop and every job must end Complete with each
// index run and counted exactly once.
func TestFleetJobsRunEachIndexOnceUnderFaults(t *testing.T) {
	for seed := *first; seed < *first+int64(*seeds); seed++ {
		t.Run("seed-"+strconv.FormatInt(seed, 10), func(t *testing.T) {
			r := newRun(t, seed)
			r.play()
			r.check()
			if t.Failed() {
				t.Logf("replay with: go test ./hub/robustness -run 'TestFleetJobsRunEachIndexOnceUnderFaults' -robustness.first=%d -robustness.seeds=1", seed)
			}
		})
	}
}

// run is one seed's fleet, jobs, faults and history.
type run struct {
	t      *testing.T
	seed   int64
	rng    *rand.Rand
	ns     string
	faults *faults
	// members are the run's clusters; removed is the one taken out of the fleet (empty
	// when the seed removes none) and withWorks whether its Works went with it.
	members   []string
	removed   string
	withWorks bool
	// departed are, by owner UID, the finished shards whose Works went with the removed
	// member: their results were counted before it left, so they stay in force for the
	// checker as they stay in the job's status.
	departed map[types.UID][]shardOf
	agents   *agents
	// completed is what the checker's watch saw of each job when it first saw it
	// Complete; mu also keeps a member's removal out of the middle of a look.
	mu        sync.Mutex
	completed map[string]completion
}

func newRun(t *testing.T, seed int64) *run {
	rng := rand.New(rand.NewSource(seed))
	r := &run{
		t: t, seed: seed, rng: rng, ns: env.Namespace(t),
		faults:    newFaults(seed, 10+rng.Intn(15), 5+rng.Intn(15), time.Duration(200+rng.Intn(1500))*time.Millisecond),
		completed: map[string]completion{},
	}
	for i := range 3 {
		r.members = append(r.members, r.member(fmt.Sprintf("s%d-%d-c%d", seed, time.Now().UnixNano()%100000, i)))
	}
	if rng.Intn(2) == 0 {
		r.removed, r.withWorks = r.members[rng.Intn(len(r.members))], rng.Intn(2) == 0
	}
	r.agents = &agents{t: t, ns: r.ns, gone: map[string]bool{}, seen: map[types.UID]bool{}}
	return r
}

// member joins an accepted, available cluster.
func (r *run) member(name string) string {
	ctx := r.t.Context()
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true}}
	must(r.t, env.Client.Create(ctx, mc))
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "Test"})
	must(r.t, env.Client.Status().Update(ctx, mc))
	must(r.t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(name)}}))
	return name
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// jobs are the run's FleetJobs: one of each placement mode, Divided both Indexed and not.
func (r *run) jobs() []*musterv1.FleetJob {
	job := func(name string, mode musterv1.PlacementMode, parallelism, completions int32, indexed bool) *musterv1.FleetJob {
		fj := &musterv1.FleetJob{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns},
			Spec: musterv1.FleetJobSpec{
				Placement: musterv1.FleetJobPlacement{Mode: mode, Placement: musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: r.members}}},
				Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
					Parallelism: ptr.To(parallelism), Completions: ptr.To(completions),
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}},
				}},
			},
		}
		if indexed {
			fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}
		return fj
	}
	return []*musterv1.FleetJob{
		job("indexed", musterv1.PlacementDivided, 3, 12, true),
		job("counted", musterv1.PlacementDivided, 3, 9, false),
		job("single", musterv1.PlacementSingle, 1, 2, false),
		job("copies", musterv1.PlacementDuplicate, 1, 2, false),
	}
}

// play runs the seed: the jobs are created while the faulty hub runs through a few
// lives, the member (if any) is removed in one of them, then a last, healthy hub runs
// until every job finishes.
func (r *run) play() {
	ctx, cancel := context.WithCancel(r.t.Context())
	defer cancel()
	go r.agents.run(ctx)
	go r.watchComplete(ctx)
	lives := 2 + r.rng.Intn(3)
	removeIn := r.rng.Intn(lives)
	for i := range lives {
		life := time.Duration(300+r.rng.Intn(2500)) * time.Millisecond
		stop := r.startHub(r.faults)
		if i == 0 {
			for _, fj := range r.jobs() {
				must(r.t, env.Client.Create(ctx, fj))
			}
		}
		if i == removeIn && r.removed != "" {
			time.Sleep(time.Duration(r.rng.Intn(int(life/time.Millisecond))) * time.Millisecond)
			r.remove()
		}
		time.Sleep(life)
		stop()
	}
	r.faults.stop()
	stop := r.startHub(r.faults)
	defer stop()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, r.look)
	if err != nil {
		r.t.Errorf("the jobs did not all finish once the faults stopped: %v\n%s", err, r.describe(ctx))
	}
	r.t.Logf("seed %d: %d lives, faults %v, cache lag %v, removed %q (with its Works: %v)", r.seed, lives, r.faults.report(), r.faults.lag, r.removed, r.withWorks)
}

// startHub starts a hub manager with the FleetJob controller behind faults, and returns
// what kills it: its context ends, and nothing of it runs once stop returns.
func (r *run) startHub(f *faults) (stop func()) {
	// Each life is a new process's manager: its controller's name is registered again.
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	must(r.t, err)
	hubClient, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme.Scheme, Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
	must(r.t, err)
	gate := failover.New(clock.RealClock{}, 1000, clusters.DefaultDisruptionThreshold, failover.DefaultUnreachableTolerationSeconds)
	must(r.t, mgr.Add(gate.Runnable()))
	rec := &fleetjob.Reconciler{
		Client: f.client(hubClient), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("fleetjob"),
		Clock: clock.RealClock{}, Failover: gate, Workers: 2,
	}
	must(r.t, rec.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			r.t.Logf("hub manager: %v", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// remove takes the run's removed member out of the fleet, as its admin deleting its
// MemberCluster does; with withWorks, its Works go too (the member namespace deleted).
func (r *run) remove() {
	ctx := r.t.Context()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.agents.leave(r.removed)
	must(r.t, client.IgnoreNotFound(env.Client.Delete(ctx, &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: r.removed}})))
	if !r.withWorks {
		return
	}
	var works musterv1.WorkList
	must(r.t, env.Client.List(ctx, &works, client.InNamespace(musterv1.MemberNamespace(r.removed))))
	for i := range works.Items {
		w := &works.Items[i]
		if uid := types.UID(w.Labels[musterv1.FleetJobUIDLabel]); uid != "" {
			s, err := shardOfWork(w)
			must(r.t, err)
			if s.complete && !s.deleting {
				if r.departed == nil {
					r.departed = map[types.UID][]shardOf{}
				}
				r.departed[uid] = append(r.departed[uid], s)
			}
		}
		must(r.t, client.IgnoreNotFound(env.Client.Delete(ctx, w)))
	}
}

// watchComplete judges each job the first time it is seen Complete (look), until ctx ends.
func (r *run) watchComplete(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, _ = r.look(ctx)
		return false, nil
	})
}

// look judges the jobs seen Complete for the first time, from their Works as the API
// server holds them then, and says whether every job is finished.
func (r *run) look(ctx context.Context) (bool, error) {
	var list musterv1.FleetJobList
	if err := env.Client.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		return false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	finished := len(list.Items) == len(r.jobs())
	for i := range list.Items {
		fj := &list.Items[i]
		complete := meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete)
		finished = finished && (complete || meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobFailed))
		if _, seen := r.completed[fj.Name]; seen || !complete {
			continue
		}
		shards, err := r.shards(ctx, fj)
		if err != nil {
			return false, err
		}
		r.completed[fj.Name] = completion{succeeded: fj.Status.Succeeded, violations: r.judge(fj, shards)}
	}
	return finished, nil
}

// describe writes each job's phase, progress, conditions and shards, for a failure.
func (r *run) describe(ctx context.Context) string {
	var b strings.Builder
	var list musterv1.FleetJobList
	if err := env.Client.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
		return err.Error()
	}
	for _, fj := range list.Items {
		fmt.Fprintf(&b, "%s: %s %s succeeded=%d placement=%+v\n", fj.Name, fj.Status.Phase, fj.Status.Progress, fj.Status.Succeeded, ptr.Deref(fj.Status.Placement, musterv1.FleetJobPlacementRecord{}))
		for _, c := range fj.Status.Conditions {
			fmt.Fprintf(&b, "  %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
		shards, err := r.shards(ctx, &fj)
		if err != nil {
			return err.Error()
		}
		for _, s := range shards {
			fmt.Fprintf(&b, "  shard %s\n", s)
		}
	}
	return b.String()
}

// shardOf is one Work of a job, as the checker reads it.
type shardOf struct {
	cluster, name         string
	uid                   types.UID
	completions, carried  int32
	fleet, carriedIndexes indexset.Set
	complete, deleting    bool
	succeeded             int32
}

func (s shardOf) String() string {
	return fmt.Sprintf("%s %s c=%d fleet={%s} carried=%d{%s} succeeded=%d complete=%v deleting=%v", s.cluster, s.name, s.completions, s.fleet, s.carried, s.carriedIndexes, s.succeeded, s.complete, s.deleting)
}

// shards reads fj's Works straight from the API server, with the finished ones that
// went with the removed member (departed) whose results fj's status counts.
func (r *run) shards(ctx context.Context, fj *musterv1.FleetJob) ([]shardOf, error) {
	var works musterv1.WorkList
	if err := env.Client.List(ctx, &works, client.MatchingLabels{musterv1.FleetJobUIDLabel: string(fj.UID)}); err != nil {
		return nil, err
	}
	out := make([]shardOf, 0, len(works.Items))
	listed := map[types.UID]bool{}
	for i := range works.Items {
		s, err := shardOfWork(&works.Items[i])
		if err != nil {
			return nil, err
		}
		out, listed[s.uid] = append(out, s), true
	}
	for _, s := range r.departed[fj.UID] {
		// Only a result the job's status counts stays in force; one the hub never saw is
		// lost with the member, and its share placed again.
		counted := slices.ContainsFunc(fj.Status.Clusters, func(c musterv1.ClusterJobStatus) bool {
			return c.ClusterName == s.cluster && c.Phase == musterv1.JobComplete && c.Eviction == nil
		})
		if counted && !listed[s.uid] {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b shardOf) int { return strings.Compare(a.cluster+a.name, b.cluster+b.name) })
	return out, nil
}

// shardOfWork is what the checker reads of one Work.
func shardOfWork(w *musterv1.Work) (shardOf, error) {
	job, status, err := decode(w)
	if err != nil {
		return shardOf{}, err
	}
	s := shardOf{cluster: w.Labels[musterv1.ClusterNameLabel], name: w.Name, uid: w.UID, completions: ptr.Deref(job.Spec.Completions, 0), deleting: w.DeletionTimestamp != nil}
	s.fleet = fleetIndexes(job)
	if n, err := strconv.Atoi(w.Annotations[musterv1.CarriedSucceededAnnotation]); err == nil {
		s.carried = int32(n)
	}
	s.carriedIndexes = indexset.Parse(w.Annotations[musterv1.CarriedIndexesAnnotation], math.MaxInt32)
	if status != nil {
		s.succeeded = status.Succeeded
		for _, c := range status.Conditions {
			s.complete = s.complete || (c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue)
		}
	}
	return s, nil
}

// fleetIndexes are the fleet's completion indexes a shard's Job runs: a range from its
// offset, or the set of a part; none for a job that is not Indexed.
func fleetIndexes(job *batchv1.Job) indexset.Set {
	if ptr.Deref(job.Spec.CompletionMode, "") != batchv1.IndexedCompletion {
		return indexset.Set{}
	}
	if set, ok := job.Annotations[musterv1.CompletionIndexesAnnotation]; ok {
		return indexset.Parse(set, math.MaxInt32)
	}
	off, _ := strconv.Atoi(job.Annotations[musterv1.IndexOffsetAnnotation])
	return indexset.Range(off, off+int(ptr.Deref(job.Spec.Completions, 0)))
}

func decode(w *musterv1.Work) (*batchv1.Job, *batchv1.JobStatus, error) {
	var job batchv1.Job
	if err := json.Unmarshal(w.Spec.Manifests[0].Raw, &job); err != nil {
		return nil, nil, err
	}
	if len(w.Status.Manifests) == 0 || w.Status.Manifests[0].Status == nil {
		return &job, nil, nil
	}
	var st batchv1.JobStatus
	if err := json.Unmarshal(w.Status.Manifests[0].Status.Raw, &st); err != nil {
		return nil, nil, err
	}
	return &job, &st, nil
}

// check asserts the invariants over the run: each job ended Complete; when it was first
// seen Complete its shards in force ran each index (or completion, or copy) exactly
// once between them and what they carried, and its succeeded count was what its
// completions promise, never more; and that count did not change since.
func (r *run) check() {
	ctx := r.t.Context()
	var list musterv1.FleetJobList
	must(r.t, env.Client.List(ctx, &list, client.InNamespace(r.ns)))
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range list.Items {
		fj := &list.Items[i]
		fail := func(format string, args ...any) {
			r.t.Errorf("job %s: %s\n%s", fj.Name, fmt.Sprintf(format, args...), r.describe(ctx))
		}
		first, ok := r.completed[fj.Name]
		switch {
		case !meta.IsStatusConditionTrue(fj.Status.Conditions, musterv1.FleetJobComplete):
			fail("not Complete")
		case !ok:
			fail("Complete, but never seen so by the checker's watch")
		case fj.Status.Succeeded != first.succeeded:
			fail("succeeded %d now, %d when it became Complete: a finished job's counts are final", fj.Status.Succeeded, first.succeeded)
		}
		for _, v := range first.violations {
			fail("when first seen Complete: %s", v)
		}
		// The status stays bounded: each evicted shard is listed once at most.
		seen := map[types.UID]bool{}
		for _, c := range fj.Status.Clusters {
			if c.Eviction == nil {
				continue
			}
			if seen[c.Eviction.WorkUID] {
				fail("the eviction of Work %s is listed twice in its status", c.Eviction.WorkUID)
			}
			seen[c.Eviction.WorkUID] = true
		}
	}
}

// completion is what the checker saw of a job the moment its watch first saw it Complete.
type completion struct {
	succeeded  int32
	violations []string
}

// judge says what is wrong with a job just seen Complete, given its Works as the API
// server holds them then.
func (r *run) judge(fj *musterv1.FleetJob, all []shardOf) []string {
	// A shard whose eviction the status records counts no longer: its Work is deleted
	// by a later round, its share runs in the parts that replace it.
	evicted := map[types.UID]bool{}
	for _, c := range fj.Status.Clusters {
		if c.Phase == musterv1.JobEvicted && c.Eviction != nil {
			evicted[c.Eviction.WorkUID] = true
		}
	}
	var inForce []shardOf
	for _, s := range all {
		if !s.deleting && !evicted[s.uid] {
			inForce = append(inForce, s)
		}
	}
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	completions := *fj.Spec.Template.Spec.Completions
	want := completions
	switch fj.Spec.Placement.Mode {
	case musterv1.PlacementDuplicate:
		copies := ptr.Deref(fj.Status.Placement, musterv1.FleetJobPlacementRecord{}).Copies
		want = completions * copies
		stayed := len(r.members)
		if r.removed != "" {
			stayed--
		}
		switch {
		case clustersOf(inForce) != len(inForce):
			fail("two copies in one cluster")
		case len(inForce) != int(copies):
			fail("%d copies in force, the placement keeps %d", len(inForce), copies)
		case len(inForce) < stayed:
			fail("%d copies, want one on each of the %d clusters that stayed", len(inForce), stayed)
		}
	case musterv1.PlacementSingle:
		if len(inForce) != 1 {
			fail("%d shards in force, want 1", len(inForce))
		}
	case musterv1.PlacementDivided:
		out = append(out, checkDivided(fj, inForce)...)
	}
	if fj.Status.Succeeded != want {
		fail("succeeded %d, want %d (%s, placement %+v)", fj.Status.Succeeded, want, fj.Status.Progress, ptr.Deref(fj.Status.Placement, musterv1.FleetJobPlacementRecord{}))
	}
	return out
}

// checkDivided asserts that a Divided job's shards in force run every index (or
// completion) of the job, none twice, between them and what they carried.
func checkDivided(fj *musterv1.FleetJob, inForce []shardOf) []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	completions := *fj.Spec.Template.Spec.Completions
	var total int32
	var covered indexset.Set
	for _, s := range inForce {
		total += s.completions + s.carried
		if ptr.Deref(fj.Spec.Template.Spec.CompletionMode, "") != batchv1.IndexedCompletion {
			continue
		}
		if n := covered.Overlap(s.fleet) + covered.Overlap(s.carriedIndexes); n > 0 {
			fail("%d indexes run or counted twice (shard %s)", n, s)
		}
		covered = covered.Union(s.fleet).Union(s.carriedIndexes)
	}
	if total != completions {
		fail("shards in force account for %d completions, want %d", total, completions)
	}
	if ptr.Deref(fj.Spec.Template.Spec.CompletionMode, "") == batchv1.IndexedCompletion && covered.String() != indexset.Range(0, int(completions)).String() {
		fail("indexes {%s} in force, want every one of 0-%d", covered, completions-1)
	}
	return out
}

func clustersOf(shards []shardOf) int {
	seen := map[string]bool{}
	for _, s := range shards {
		seen[s.cluster] = true
	}
	return len(seen)
}

// agents play the members' agents on every Work of the run: a Work is applied (its Job
// created, its pods active) when first seen, and its Job completes at the next pass,
// each index once. A member that left the fleet reports nothing any longer.
type agents struct {
	t    *testing.T
	ns   string
	mu   sync.Mutex
	gone map[string]bool
	seen map[types.UID]bool
}

func (a *agents) leave(cluster string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gone[cluster] = true
}

func (a *agents) run(ctx context.Context) {
	_ = wait.PollUntilContextCancel(ctx, 150*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var works musterv1.WorkList
		if err := env.Client.List(ctx, &works, client.MatchingLabels{musterv1.FleetJobNamespaceLabel: a.ns}); err != nil {
			return false, nil
		}
		for i := range works.Items {
			a.step(ctx, &works.Items[i])
		}
		return false, nil
	})
}

// step moves one Work on: applied first, complete at the next pass.
func (a *agents) step(ctx context.Context, w *musterv1.Work) {
	a.mu.Lock()
	gone, applied := a.gone[w.Labels[musterv1.ClusterNameLabel]], a.seen[w.UID]
	a.seen[w.UID] = true
	a.mu.Unlock()
	if gone || w.DeletionTimestamp != nil {
		return
	}
	job, status, err := decode(w)
	if err != nil {
		a.t.Error(err)
		return
	}
	if status != nil && slices.ContainsFunc(status.Conditions, func(c batchv1.JobCondition) bool { return c.Type == batchv1.JobComplete }) {
		return
	}
	completions := ptr.Deref(job.Spec.Completions, 1)
	st := batchv1.JobStatus{Active: ptr.Deref(job.Spec.Parallelism, 1), Ready: ptr.To[int32](0)}
	if applied && status != nil {
		now := metav1.Now()
		st = batchv1.JobStatus{Succeeded: completions, Ready: ptr.To[int32](0), CompletionTime: &now, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}}
		if ptr.Deref(job.Spec.CompletionMode, "") == batchv1.IndexedCompletion {
			st.CompletedIndexes = indexset.Range(0, int(completions)).String()
		}
	}
	raw, err := json.Marshal(st)
	if err != nil {
		a.t.Error(err)
		return
	}
	ms := musterv1.ManifestStatus{
		Resource: musterv1.ResourceIdentifier{Group: "batch", Version: "v1", Kind: "Job", Namespace: job.Namespace, Name: job.Name},
		Status:   &runtime.RawExtension{Raw: raw},
	}
	meta.SetStatusCondition(&ms.Conditions, metav1.Condition{Type: musterv1.WorkApplied, Status: metav1.ConditionTrue, Reason: "Applied", ObservedGeneration: w.Generation})
	w.Status.Manifests = []musterv1.ManifestStatus{ms}
	if err := env.Client.Status().Update(ctx, w); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) && ctx.Err() == nil {
		a.t.Logf("agent of %s: %v", w.Labels[musterv1.ClusterNameLabel], err)
	}
}
