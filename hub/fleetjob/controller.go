// Package fleetjob is the hub's FleetJob controller: it places a batch Job on one cluster,
// on every selected cluster, or divided among them, ships each cluster's shard through a
// Work to the agent's Job controller, and sums up the shards' status.
package fleetjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/internal/failover"
	"github.com/musterhq/muster/hub/internal/shardowner"
	"github.com/musterhq/muster/hub/inventory"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/hub/shards"
	"github.com/musterhq/muster/internal/fairqueue"
	"github.com/musterhq/muster/internal/patch"
)

// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters,verbs=get;list;watch

// Reconciler runs FleetJobs.
type Reconciler struct {
	Client client.Client
	// APIReader, when set, reads WorkloadSpreads from the API server before a FleetJob's
	// first placement, so a spread created just before its FleetJob is never missed by a
	// cache that has not seen it yet.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Inventory *inventory.Inventory
	// UnschedulableWindow is how long an Adaptive WorkloadSpread keeps new pods off a
	// subset its status marks unschedulable; zero means DefaultUnschedulableWindow. The
	// WorkloadSpread controller must be given the same.
	UnschedulableWindow time.Duration
	// NewQueue builds the controller's work queue; nil means fairqueue.New, where hub
	// namespaces take turns so one tenant's burst does not delay another's FleetJobs.
	NewQueue fairqueue.NewFunc
	// Failover, when set, moves the shards of Single and Duplicate jobs off clusters whose
	// NoExecute taints they no longer tolerate; nil leaves placed shards where they are.
	Failover *failover.Gate
	// PodSecurityLevel is the enforce level of a hub namespace whose labels name none
	// (empty: podsecurity.DefaultLevel); the shards' Works carry their namespace's levels.
	PodSecurityLevel psaapi.Level
	// Observed, set by tests only (this package's and hub/workloadspread's, which runs
	// this controller beside its own), is told of each FleetJob a round is done with, so a
	// test that checks nothing changed knows the controller has looked.
	Observed func(*musterv1.FleetJob)
	// Workers is how many FleetJobs are reconciled at once (at least 1). One FleetJob is
	// never reconciled by two at once: the queue hands out each key to one worker.
	Workers int

	// writes are the FleetJob status writes the cache may not show yet.
	writes patch.Writes
	// refusals paces the status writes of FleetJobs after the API server refused one as
	// invalid.
	refusals patch.Refusals
}

func (r *Reconciler) unschedulableWindow() time.Duration {
	if r.UnschedulableWindow > 0 {
		return r.UnschedulableWindow
	}
	return DefaultUnschedulableWindow
}

// SetupWithManager watches FleetJobs, their shards' Works, member clusters (a FleetJob
// waiting for an eligible cluster is placed when one appears), and the WorkloadSpreads
// that place FleetJobs.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := shards.IndexWorksByOwner(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("fleetjob").
		For(&musterv1.FleetJob{}).
		Watches(&musterv1.Work{}, handler.EnqueueRequestsFromMapFunc(shards.OwnerOf(musterv1.FleetJobNameLabel, musterv1.FleetJobNamespaceLabel))).
		Watches(&musterv1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.unplaced)).
		Watches(&musterv1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.shardsOnCluster), builder.WithPredicates(noExecuteChange)).
		Watches(&musterv1.WorkloadSpread{}, handler.EnqueueRequestsFromMapFunc(targetOfSpread)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1), NewQueue: fairqueue.Or(r.NewQueue)}).
		Complete(r)
}

func (r *Reconciler) unplaced(ctx context.Context, _ client.Object) []reconcile.Request {
	var list musterv1.FleetJobList
	if err := r.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing FleetJobs for a member cluster change")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if !meta.IsStatusConditionTrue(list.Items[i].Status.Conditions, musterv1.FleetJobScheduled) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// Reconcile places a FleetJob once, then keeps its status in line with its shards. It
// reads the FleetJob's world (observe), acts on pure decisions (placeFirst, track), and
// writes the status they reached once, on the way out, before the events that status
// records.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	fj := &musterv1.FleetJob{}
	if res, done, err := r.opening().Open(ctx, req.NamespacedName, fj); done {
		return res, err
	}
	if err := r.opening().HoldShards(ctx, fj); err != nil {
		return patch.Requeue(err)
	}
	snap, err := r.observe(ctx, fj)
	if err != nil {
		return ctrl.Result{}, err
	}
	var out outcome
	defer func() {
		if out.status != nil || len(out.events) > 0 {
			res, err = r.record(ctx, fj, out)
		}
		if r.Observed != nil {
			r.Observed(fj)
		}
	}()
	if snap.firstPlacement() {
		out, err = r.placeFirst(ctx, snap)
		return ctrl.Result{}, err
	}
	out, err = r.track(ctx, snap)
	if err != nil {
		return patch.Requeue(err)
	}
	return ctrl.Result{}, nil
}

// opening reads a FleetJob and settles its deletion and finalizer before any decision.
func (r *Reconciler) opening() shardowner.Opening {
	return shardowner.Opening{Client: r.Client, UIDLabel: musterv1.FleetJobUIDLabel, Writes: &r.writes, Refusals: &r.refusals}
}

// snapshot is what one round knows of a FleetJob's world.
type snapshot struct {
	fj *musterv1.FleetJob
	// works are the Works carrying its shards, by key; shards are those not being
	// removed, decoded, in key order.
	works  map[string]*musterv1.Work
	shards []shardState
	// spread is the WorkloadSpread that places the FleetJob, or nil; subsets are its
	// subsets resolved against the member clusters.
	spread  *musterv1.WorkloadSpread
	subsets []spreadSubset
	// members and fit (nodes that fit the pod template, by cluster) are read only for a
	// first placement without a spread; members leaves out the clusters where one of the
	// job's Works is still being removed.
	members []musterv1.MemberCluster
	fit     map[string]int
	// deciding is when the round began reading members and fit, to time the decision.
	deciding time.Time
	// clusters are the member clusters of the placed shards, by name, read when shards
	// may fail over.
	clusters map[string]*musterv1.MemberCluster
}

// firstPlacement says whether the FleetJob has no shard in force and none is decided: a
// new job, one no cluster could take yet, and one whose every shard was evicted.
func (s *snapshot) firstPlacement() bool {
	return s.spread == nil && len(s.shards) == 0 && !meta.IsStatusConditionTrue(s.fj.Status.Conditions, musterv1.FleetJobScheduled)
}

// outcome is what a round leaves to record: the status to write (nil: none), then the
// events that status records, and when to look again.
type outcome struct {
	status  *musterv1.FleetJobStatus
	events  []event
	requeue time.Duration
	// evicted counts the shards whose eviction status records: counted once written.
	evicted int
}

// event is one event about the FleetJob.
type event struct {
	eventType, reason, action, note string
}

// observe reads what the round decides from.
func (r *Reconciler) observe(ctx context.Context, fj *musterv1.FleetJob) (*snapshot, error) {
	works, err := r.works(ctx, fj)
	if err != nil {
		return nil, err
	}
	current, err := readShards(works)
	if err != nil {
		return nil, err
	}
	ws, err := r.spreadOf(ctx, fj, works)
	if err != nil {
		return nil, err
	}
	if ws == nil && r.APIReader != nil {
		if _, short := shortfallOf(fj, inForce(fj, current)); short {
			// The cache may not show yet the Works this hub wrote: what is missing is
			// read from the API server before anything is decided on its absence.
			if works, err = shards.Works(ctx, r.APIReader, musterv1.FleetJobUIDLabel, fj.UID); err != nil {
				return nil, err
			}
			if current, err = readShards(works); err != nil {
				return nil, err
			}
		}
	}
	snap := &snapshot{fj: fj, works: works, shards: current, spread: ws, fit: map[string]int{}}
	if ws != nil {
		snap.subsets, err = r.spreadSubsets(ctx, fj, ws)
		return snap, err
	}
	if !snap.firstPlacement() {
		if r.Failover != nil {
			snap.clusters, err = r.shardClusters(ctx, current)
		}
		return snap, err
	}
	snap.deciding = time.Now()
	var members musterv1.MemberClusterList
	if err := r.Client.List(ctx, &members); err != nil {
		return nil, fmt.Errorf("listing member clusters: %w", err)
	}
	// A Work still being removed (a shard evicted from a cluster whose agent has not come
	// back to let it go) holds the name a new shard there would take.
	snap.members = slices.DeleteFunc(members.Items, func(mc musterv1.MemberCluster) bool {
		w := works[shards.Key(mc.Name, "")]
		return w != nil && w.DeletionTimestamp != nil
	})
	if r.Inventory != nil {
		snap.fit = r.Inventory.EligibleCountByCluster(&fj.Spec.Template.Spec.Template.Spec)
	}
	return snap, nil
}

// shardClusters reads the member clusters of states, whose shards may fail over.
func (r *Reconciler) shardClusters(ctx context.Context, states []shardState) (map[string]*musterv1.MemberCluster, error) {
	out := make(map[string]*musterv1.MemberCluster, len(states))
	for _, s := range states {
		if out[s.cluster] != nil {
			continue
		}
		mc := &musterv1.MemberCluster{}
		err := r.Client.Get(ctx, client.ObjectKey{Name: s.cluster}, mc)
		if apierrors.IsNotFound(err) && r.APIReader != nil {
			// A cluster gone moves its shards at once: the API server confirms it.
			err = r.APIReader.Get(ctx, client.ObjectKey{Name: s.cluster}, mc)
		}
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading member cluster %s: %w", s.cluster, err)
		}
		out[s.cluster] = mc
	}
	return out, nil
}

// record writes the round's status, then announces what it records: a failed write is
// retried, and its retry finds the same news.
func (r *Reconciler) record(ctx context.Context, fj *musterv1.FleetJob, out outcome) (ctrl.Result, error) {
	before := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled)
	if out.status == nil {
		r.announce(fj, out.events)
		return ctrl.Result{RequeueAfter: out.requeue}, nil
	}
	events := append(scheduledNews(before, meta.FindStatusCondition(out.status.Conditions, musterv1.FleetJobScheduled)), out.events...)
	if err := r.updateStatus(ctx, fj, *out.status); err != nil {
		return patch.Requeue(err)
	}
	hubmetrics.Failovers.WithLabelValues("FleetJob").Add(float64(out.evicted))
	r.announce(fj, events)
	return ctrl.Result{RequeueAfter: out.requeue}, nil
}

func (r *Reconciler) announce(fj *musterv1.FleetJob, events []event) {
	for _, e := range events {
		r.Recorder.Eventf(fj, nil, e.eventType, e.reason, e.action, "%s", e.note)
	}
}

// placeFirst places a FleetJob without a spread: it writes one Work per shard. The
// decision is final: the shards' completions and index ranges cannot change once their
// Jobs exist.
func (r *Reconciler) placeFirst(ctx context.Context, snap *snapshot) (outcome, error) {
	fj := snap.fj
	d := decidePlacement(fj, snap.members, snap.fit)
	hubmetrics.PlacementDecisionSeconds.WithLabelValues("FleetJob").Observe(time.Since(snap.deciding).Seconds())
	status := fj.Status.DeepCopy()
	status.Phase = musterv1.JobPending
	if len(d.shards) == 0 {
		hubmetrics.PlacementDecisions.WithLabelValues("FleetJob", hubmetrics.OutcomeNoEligibleClusters).Inc()
		if c := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled); c == nil || c.Reason != musterv1.ReasonNoEligibleClusters {
			log.FromContext(ctx).Info("no member cluster can take the FleetJob; it waits for one", "excluded", d.excluded)
		}
		meta.SetStatusCondition(&status.Conditions, d.scheduled)
		return outcome{status: status}, nil
	}
	var fence time.Duration
	if r.Failover != nil {
		fence, _ = r.fencing(fj)
	}
	for i := range d.shards {
		d.shards[i].fence = fence
	}
	works, err := r.shardWorks(ctx, fj, d.shards)
	if err != nil {
		return outcome{}, err
	}
	taken, err := r.nameTaken(ctx, fj, works)
	switch {
	case err != nil:
		return outcome{}, err
	case taken != nil:
		hubmetrics.PlacementDecisions.WithLabelValues("FleetJob", hubmetrics.OutcomeNameTaken).Inc()
		meta.SetStatusCondition(&status.Conditions, *taken)
		return outcome{status: status}, nil
	}
	// The decision is recorded before any of its Works is written: a round that then
	// finds only some of them knows the rest is missing (shortfallOf) and places it,
	// instead of taking the shards it happens to see for the whole job.
	before := meta.FindStatusCondition(fj.Status.Conditions, musterv1.FleetJobScheduled).DeepCopy()
	from := movedFrom(fj)
	meta.SetStatusCondition(&status.Conditions, d.scheduled)
	status.Placement = r.decided(fj, len(d.shards))
	if err := r.updateStatus(ctx, fj, *status); err != nil {
		return outcome{}, err
	}
	// Counted once recorded: Scheduled=True, which users and tests watch, says decided.
	hubmetrics.PlacementDecisions.WithLabelValues("FleetJob", hubmetrics.OutcomePlaced).Inc()
	log.FromContext(ctx).V(2).Info("placed the FleetJob", "mode", fj.Spec.Placement.Mode, "clusters", d.clusters, "decision", status.Placement.Decisions)
	if err := r.writeDecided(ctx, fj, works); err != nil {
		return outcome{}, err
	}
	out := outcome{events: scheduledNews(before, &d.scheduled)}
	if from != "" {
		out.events = append(out.events, event{corev1.EventTypeNormal, musterv1.FleetJobReasonFailedOver, "Place", fmt.Sprintf("moved the job from %s to %s", from, d.clusters)})
	}
	return out, nil
}

// decided is fj's placement record with one more decision, which leaves a Duplicate job
// the given number of copies.
func (r *Reconciler) decided(fj *musterv1.FleetJob, copies int) *musterv1.FleetJobPlacementRecord {
	rec := &musterv1.FleetJobPlacementRecord{Decisions: recordedDecisions(fj) + 1, LastDecisionTime: &metav1.Time{Time: r.Clock.Now()}}
	if fj.Spec.Placement.Mode == musterv1.PlacementDuplicate {
		rec.Copies = int32(copies)
	}
	return rec
}

// writeDecided creates the Works of a recorded decision. A Work that exists already is
// one a retry of the same decision wrote (the create was applied, its answer lost);
// one that carries another share is a decision this round did not see, and the round
// stops for the cache to catch up. A refused create is reported on the FleetJob
// (ShardsApplied=False, ShardNotWritten) and its share placed again by a later round.
func (r *Reconciler) writeDecided(ctx context.Context, fj *musterv1.FleetJob, works []*musterv1.Work) error {
	errs := shards.Each(len(works), func(i int) error {
		err := r.Client.Create(ctx, works[i])
		if apierrors.IsAlreadyExists(err) {
			err = r.sameShard(ctx, works[i])
		}
		if err != nil {
			return fmt.Errorf("writing the shard for cluster %s: %w", works[i].Labels[musterv1.ClusterNameLabel], err)
		}
		return nil
	})
	err := errors.Join(errs...)
	if err == nil {
		return nil
	}
	status := fj.Status.DeepCopy()
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: musterv1.FleetJobShardsApplied, Status: metav1.ConditionFalse, Reason: musterv1.FleetJobReasonShardNotWritten, ObservedGeneration: fj.Generation,
		Message: notWrittenMessage(errs),
	})
	if serr := r.updateStatus(ctx, fj, *status); serr != nil {
		return errors.Join(err, serr)
	}
	r.Recorder.Eventf(fj, nil, corev1.EventTypeWarning, musterv1.FleetJobReasonShardNotWritten, "Place", "%s", notWrittenMessage(errs))
	return err
}

// sameShard says whether the Work that holds want's name carries the same shard, read
// from the API server; an error otherwise.
func (r *Reconciler) sameShard(ctx context.Context, want *musterv1.Work) error {
	reader := client.Reader(r.Client)
	if r.APIReader != nil {
		reader = r.APIReader
	}
	var cur musterv1.Work
	if err := reader.Get(ctx, client.ObjectKeyFromObject(want), &cur); err != nil {
		return fmt.Errorf("reading the Work that holds the shard's name: %w", err)
	}
	if cur.DeletionTimestamp != nil || cur.Labels[musterv1.FleetJobUIDLabel] != want.Labels[musterv1.FleetJobUIDLabel] {
		return errStaleShards
	}
	have, _, err := readWork(&cur)
	if err != nil {
		return err
	}
	planned, _, err := readWork(want)
	if err != nil {
		return err
	}
	if !sameShare(have, planned) {
		return errStaleShards
	}
	return nil
}

// errStaleShards is a shard's name held by a Work of another decision than the one the
// round made: the round saw less than there is, and is tried again.
var errStaleShards = errors.New("a Work of an earlier decision holds the shard's name; the round is retried once the cache shows it")

// track keeps a placed FleetJob (or one its spread places) in line with its shards: the
// spread's changes first, then the sum of the shards' reports, and the shards a failure
// stops.
func (r *Reconciler) track(ctx context.Context, snap *snapshot) (outcome, error) {
	fj, works := snap.fj, snap.works
	var current []shardState
	var scheduled *metav1.Condition
	var requeue time.Duration
	var moved failoverResult
	if snap.spread != nil {
		res, err := r.placeBySpread(ctx, snap)
		if err != nil {
			return outcome{}, err
		}
		works, current, scheduled, requeue = res.works, res.shards, &res.scheduled, res.requeue
		moved.evicted, moved.events = res.evicted, res.events
	} else {
		var err error
		if moved, err = r.failover(ctx, snap); err != nil {
			return outcome{}, err
		}
		current, requeue = moved.shards, moved.requeue
		if len(moved.evicted) == 0 {
			// A round that evicts leaves its shortfall to the next, which sees the
			// eviction recorded: the evicted shard's share is its parts' until then.
			rest, err := r.fillShortfall(ctx, snap, current)
			if err != nil {
				return outcome{}, err
			}
			current = append(current, rest.shards...)
			moved.events = append(moved.events, rest.events...)
			requeue = patch.Soonest(requeue, rest.requeue)
		}
	}
	// A spread's job records no placement: its spread re-divides it every round.
	_, short := shortfallOf(fj, current)
	status, stop := summarize(fj, current, short && snap.spread == nil, r.Clock.Now())
	if finishedFleet(&fj.Status) {
		// A finished job's status is final, as the built-in Job's: a round that sees
		// fewer of its shards (a member removed since, a cache behind) does not rewrite
		// its counts. Its rounds still stop what a failure stopped.
		again, err := r.stopShards(ctx, fj, works, stop)
		return outcome{requeue: patch.Soonest(requeue, again)}, err
	}
	if p := status.Placement; p != nil && fj.Spec.Placement.Mode == musterv1.PlacementDuplicate && len(moved.evicted) > 0 {
		// An evicted copy is dropped, not moved: the placement keeps one fewer.
		p.Copies = max(p.Copies-int32(len(moved.evicted)), 0)
	}
	status.Clusters = append(status.Clusters, keepEvicted(fj.Status.Clusters, moved.evicted...)...)
	if scheduled != nil {
		meta.SetStatusCondition(&status.Conditions, *scheduled)
	}
	if snap.spread == nil && len(moved.evicted) > 0 && len(current) == 0 {
		meta.SetStatusCondition(&status.Conditions, evictedScheduled(fj, moved.evicted))
		requeue = time.Second
	}
	news := shardConditions(&status, fj.Status.Conditions, current, fj.Generation)
	again, err := r.stopShards(ctx, fj, works, stop)
	if err != nil {
		return outcome{}, err
	}
	requeue = patch.Soonest(requeue, again)
	out := outcome{status: &status, requeue: requeue, events: moved.events, evicted: len(moved.evicted)}
	for _, c := range news {
		log.FromContext(ctx).Info("shards of the FleetJob have a problem in their member clusters", "condition", c.Type, "reason", c.Reason,
			"clusters", troubledClusters(current, c.Type), "message", c.Message)
		action := "Apply"
		if c.Type == musterv1.FleetJobPodsSchedulable {
			action = "Schedule"
		}
		out.events = append(out.events, event{corev1.EventTypeWarning, c.Reason, action, c.Message})
	}
	return out, nil
}

// stopShards suspends the shards of keys, which a failure stops, and says when to look
// again for those written this round, whose Works the cache does not show yet.
func (r *Reconciler) stopShards(ctx context.Context, fj *musterv1.FleetJob, works map[string]*musterv1.Work, keys []string) (time.Duration, error) {
	var again time.Duration
	for _, k := range keys {
		if works[k] == nil {
			// A part written this round: the next round, which sees its Work, stops it.
			again = time.Second
			continue
		}
		if err := r.suspend(ctx, fj, works[k]); err != nil {
			return 0, err
		}
	}
	return again, nil
}

// nameTaken returns a False Scheduled condition when another object's Work (one made by
// hand: no other FleetJob's shard has the name) already holds the name of one of works;
// nil when every name is free or fj's.
func (r *Reconciler) nameTaken(ctx context.Context, fj *musterv1.FleetJob, works []*musterv1.Work) (*metav1.Condition, error) {
	taken, err := shards.Taken(ctx, r.Client, works, musterv1.FleetJobUIDLabel)
	if err != nil || taken == nil {
		return nil, err
	}
	return takenCondition(fj, taken), nil
}

// suspend stops a shard: its Job is suspended, so its pods are removed without counting
// as failures and its record stays.
func (r *Reconciler) suspend(ctx context.Context, fj *musterv1.FleetJob, w *musterv1.Work) error {
	s, _, err := readWork(w)
	if err != nil {
		return err
	}
	s.suspend = true
	want, err := newWork(fj, s)
	if err != nil {
		return err
	}
	h := patch.NewHelper(r.Client, w)
	w.Spec = want.Spec
	if err := r.annotatePodSecurity(ctx, fj, w); err != nil {
		return err
	}
	if err := h.Patch(ctx, w); err != nil {
		return fmt.Errorf("suspending the shard in %s: %w", s.describe(), err)
	}
	r.Recorder.Eventf(fj, nil, corev1.EventTypeWarning, musterv1.FleetJobReasonShardStopped, "Suspend", "suspended the shard in %s after another shard failed", s.describe())
	return nil
}

// shardWorks wraps each of shards in its Work, with the Pod Security labels of fj's
// namespace: what placement, a rest placed again and an eviction's parts all write.
func (r *Reconciler) shardWorks(ctx context.Context, fj *musterv1.FleetJob, shards []shard) ([]*musterv1.Work, error) {
	works := make([]*musterv1.Work, len(shards))
	for i, s := range shards {
		w, err := newWork(fj, s)
		if err != nil {
			return nil, err
		}
		works[i] = w
	}
	if err := r.annotatePodSecurity(ctx, fj, works...); err != nil {
		return nil, err
	}
	return works, nil
}

// annotatePodSecurity puts the Pod Security labels of fj's namespace on works, for the
// agents to put on the member namespaces they create (see shards.PodSecurityOf).
func (r *Reconciler) annotatePodSecurity(ctx context.Context, fj *musterv1.FleetJob, works ...*musterv1.Work) error {
	value, err := shards.PodSecurityOf(ctx, r.Client, r.PodSecurityLevel, fj.Namespace)
	if err != nil {
		return err
	}
	for _, w := range works {
		shards.SetPodSecurity(w, value)
	}
	return nil
}

func (r *Reconciler) works(ctx context.Context, fj *musterv1.FleetJob) (map[string]*musterv1.Work, error) {
	return shards.CachedWorks(ctx, r.Client, musterv1.FleetJobUIDLabel, fj.UID)
}

// updateStatus writes status when it changed, then announces the FleetJob's end.
func (r *Reconciler) updateStatus(ctx context.Context, fj *musterv1.FleetJob, status musterv1.FleetJobStatus) error {
	wasFinished := finishedFleet(&fj.Status)
	// The status records the job's placement decisions: a write computed from a copy
	// older than the API server's (a write whose answer was lost, a cache behind) is
	// refused as a conflict rather than merged into a status no round decided.
	h := patch.NewHelper(r.Client, fj, patch.SharedStatus(), patch.Tracked(&r.writes), patch.Paced(&r.refusals, r.Recorder))
	fj.Status = status
	if err := h.Patch(ctx, fj); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	if !wasFinished && finishedFleet(&status) {
		for _, t := range []string{musterv1.FleetJobComplete, musterv1.FleetJobFailed} {
			if c := meta.FindStatusCondition(status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
				eventType := corev1.EventTypeNormal
				if t == musterv1.FleetJobFailed {
					eventType = corev1.EventTypeWarning
				}
				r.Recorder.Eventf(fj, nil, eventType, c.Reason, t, "%s", c.Message)
			}
		}
	}
	return nil
}
