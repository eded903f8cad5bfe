// Package broadcastjob is the hub's BroadcastJob controller: it runs a BroadcastJob that
// has a placement across the member clusters it selects, one shard per cluster carried by
// a Work, and applies parallelism, failure policy, deadline and TTL fleet-wide.
package broadcastjob

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bcj "github.com/musterhq/muster/api/broadcastjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/internal/failover"
	"github.com/musterhq/muster/hub/internal/shardowner"
	"github.com/musterhq/muster/hub/inventory"
	hubmetrics "github.com/musterhq/muster/hub/metrics"
	"github.com/musterhq/muster/hub/shards"
	bcjwrite "github.com/musterhq/muster/internal/broadcastjob"
	"github.com/musterhq/muster/internal/fairqueue"
	"github.com/musterhq/muster/internal/patch"
	"github.com/musterhq/muster/placement/clusters"
)

// +kubebuilder:rbac:groups=muster.dev,resources=broadcastjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=broadcastjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=muster.dev,resources=works,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=muster.dev,resources=memberclusters,verbs=get;list;watch

// Reconciler runs hub BroadcastJobs.
type Reconciler struct {
	Client    client.Client
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Inventory *inventory.Inventory
	// PodSecurityLevel is the enforce level of a hub namespace whose labels name none
	// (empty: podsecurity.DefaultLevel); the shards' Works carry their namespace's levels.
	PodSecurityLevel psaapi.Level
	// Failover, when set, takes shards off clusters whose NoExecute taints their job no
	// longer tolerates; nil leaves placed shards where they are.
	Failover *failover.Gate
	// Workers is how many jobs are reconciled at once (at least 1); the queue hands each
	// job to one worker at a time.
	Workers int

	// writes are the job status writes the cache may not show yet.
	writes patch.Writes
	// refusals paces the writes of jobs after the API server refused one as invalid.
	refusals patch.Refusals
}

// opening reads a job and settles its deletion and finalizer before any decision.
func (r *Reconciler) opening() shardowner.Opening {
	return shardowner.Opening{Client: r.Client, UIDLabel: musterv1.BroadcastJobUIDLabel, Writes: &r.writes, Refusals: &r.refusals}
}

func (r *Reconciler) writer() bcjwrite.Writer {
	return bcjwrite.Writer{Client: r.Client, Recorder: r.Recorder, Writes: &r.writes, Refusals: &r.refusals}
}

// SetupWithManager watches hub BroadcastJobs, the Works carrying their shards, and the
// member clusters that can take shards.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := shards.IndexWorksByOwner(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("hub-broadcastjob").
		For(&musterv1.BroadcastJob{}, builder.WithPredicates(hubManaged)).
		Watches(&musterv1.Work{}, handler.EnqueueRequestsFromMapFunc(shards.OwnerOf(musterv1.BroadcastJobNameLabel, musterv1.BroadcastJobNamespaceLabel))).
		Watches(&musterv1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(r.unfinishedJobs)).
		// Hub namespaces take turns: one tenant's burst does not delay another's jobs.
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1), NewQueue: fairqueue.New}).
		Complete(r)
}

// hubManaged keeps BroadcastJobs with a placement, those without one that have no status
// yet, to say why nothing runs them, and those that still hold the hub's finalizer (a
// placement removed after shards were placed): their shards go when they are deleted.
// The others run in a member.
var hubManaged = predicate.NewPredicateFuncs(func(o client.Object) bool {
	job, ok := o.(*musterv1.BroadcastJob)
	return ok && (job.Spec.Placement != nil || len(job.Status.Conditions) == 0 || controllerutil.ContainsFinalizer(job, musterv1.ShardsFinalizer))
})

// unfinishedJobs maps a member cluster change (joined, available, relabelled) to every
// hub job that may now place a shard there or lose one.
func (r *Reconciler) unfinishedJobs(ctx context.Context, _ client.Object) []reconcile.Request {
	var jobs musterv1.BroadcastJobList
	if err := r.Client.List(ctx, &jobs); err != nil {
		log.FromContext(ctx).Error(err, "listing BroadcastJobs for a member cluster change")
		return nil
	}
	var reqs []reconcile.Request
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if job.Spec.Placement != nil && !bcj.Finished(&job.Status) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)})
		}
	}
	return reqs
}

// Reconcile places, steers and sums up one hub job.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := &musterv1.BroadcastJob{}
	if res, done, err := r.opening().Open(ctx, req.NamespacedName, job); done {
		return res, err
	}
	if job.Spec.Placement == nil {
		if status, ok := noPlacementStatus(job); ok {
			return patch.Requeue(r.writer().UpdateStatus(ctx, job, status))
		}
		return ctrl.Result{}, nil
	}
	if err := r.opening().HoldShards(ctx, job); err != nil {
		return patch.Requeue(err)
	}
	works, err := r.works(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	withdrawn, err := r.withdraw(ctx, job, works)
	if err != nil {
		return patch.Requeue(err)
	}
	if bcj.Finished(&job.Status) {
		return r.deleteAfterTTL(ctx, job)
	}

	deciding := time.Now()
	observed, err := r.observe(ctx, job, works)
	if err != nil {
		return ctrl.Result{}, err
	}
	moves := r.failover(ctx, &observed, works, withdrawn)
	plan := decideFleet(observed)
	hubmetrics.PlacementDecisionSeconds.WithLabelValues("BroadcastJob").Observe(time.Since(deciding).Seconds())
	plan.requeueAfter = patch.Soonest(plan.requeueAfter, moves.requeue)
	if plan.pause {
		// The pause is persisted first and alone; the status then says why, so a later
		// round can tell this pause from one the user made.
		if err := r.writer().PauseOnFailure(ctx, job, plan.status.Failed, "every cluster"); err != nil {
			return patch.Requeue(err)
		}
		if err := r.writer().UpdateStatus(ctx, job, plan.status); err != nil {
			return patch.Requeue(err)
		}
		r.announce(ctx, job, plan.news)
		r.announceMoves(job, moves)
		return ctrl.Result{}, nil
	}
	taken, err := r.takenName(ctx, job, works, plan.shards)
	if err != nil {
		return ctrl.Result{}, err
	}
	if taken != nil {
		plan = withNameTaken(plan, job, works, taken)
	}
	raced, err := r.writeShards(ctx, job, works, plan.shards)
	if err != nil {
		return patch.Requeue(err)
	}
	if raced {
		// A Work of the shard's name appeared since takenName looked: the next round
		// finds whose it is.
		plan.requeueAfter = patch.RetryAfter
	}
	stuck := newlyWithoutClusters(&job.Status, &plan.status)
	if err := r.writer().UpdateStatus(ctx, job, plan.status); err != nil {
		return patch.Requeue(err)
	}
	if stuck != nil {
		hubmetrics.PlacementDecisions.WithLabelValues("BroadcastJob", hubmetrics.OutcomeNoEligibleClusters).Inc()
		log.FromContext(ctx).Info("no member cluster can run the BroadcastJob; it waits for one", "message", stuck.Message)
	}
	r.announce(ctx, job, plan.news)
	r.announceMoves(job, moves)
	if bcj.Finished(&plan.status) {
		if left, ok := bcj.TTLLeft(job, r.Clock.Now()); ok {
			return ctrl.Result{RequeueAfter: max(left, time.Second)}, nil
		}
	}
	return ctrl.Result{RequeueAfter: plan.requeueAfter}, nil
}

// announce reports shard failures the job's status now shows, once each: only after the
// status that holds them is written, so a conflicting write's retry finds them again.
func (r *Reconciler) announce(ctx context.Context, job *musterv1.BroadcastJob, news []metav1.Condition) {
	for _, c := range news {
		log.FromContext(ctx).Info("shards of the BroadcastJob have a problem in their member clusters", "condition", c.Type, "reason", c.Reason, "message", c.Message)
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, c.Reason, "Apply", "%s", c.Message)
	}
}

// works lists the Works carrying the job's shards, by cluster.
func (r *Reconciler) works(ctx context.Context, job *musterv1.BroadcastJob) (map[string]*musterv1.Work, error) {
	return shards.CachedWorks(ctx, r.Client, musterv1.BroadcastJobUIDLabel, job.UID)
}

// observe gathers what decideFleet needs: the eligible clusters, each shard and its
// reported status, and the inventory's node counts for clusters that have not reported.
func (r *Reconciler) observe(ctx context.Context, job *musterv1.BroadcastJob, works map[string]*musterv1.Work) (fleetObserved, error) {
	var members musterv1.MemberClusterList
	if err := r.Client.List(ctx, &members); err != nil {
		return fleetObserved{}, fmt.Errorf("listing member clusters: %w", err)
	}
	eligible, excluded := clusters.Eligible(job.Spec.Placement, members.Items)
	names := append(slices.Clone(eligible), mapKeys(works)...)
	slices.Sort(names)
	names = slices.Compact(names)
	var fit map[string]int
	if r.Inventory != nil {
		fit = r.Inventory.EligibleCountByCluster(&job.Spec.Template.Spec)
	}
	o := fleetObserved{job: job, members: members.Items, excluded: excluded, now: r.Clock.Now()}
	for _, name := range names {
		c := cluster{name: name, eligible: slices.Contains(eligible, name), inventoryDesired: int32(fit[name])}
		if w, ok := works[name]; ok {
			s, status, err := readWork(w)
			if err != nil {
				return fleetObserved{}, err
			}
			c.hasShard, c.shard, c.reported = true, s, status
			c.applied, c.applyError = shards.ApplyState(w)
		}
		o.clusters = append(o.clusters, c)
	}
	return o, nil
}

func mapKeys(m map[string]*musterv1.Work) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// takenName returns the first Work, by cluster, that another object holds under the name
// of a shard planned in a cluster that has none yet; nil when every name is free.
func (r *Reconciler) takenName(ctx context.Context, job *musterv1.BroadcastJob, works map[string]*musterv1.Work, planned map[string]shardSpec) (*musterv1.Work, error) {
	var fresh []*musterv1.Work
	for _, cluster := range slices.Sorted(maps.Keys(planned)) {
		if _, ok := works[cluster]; ok {
			continue
		}
		w, err := newWork(job, cluster, planned[cluster])
		if err != nil {
			return nil, err
		}
		fresh = append(fresh, w)
	}
	return shards.Taken(ctx, r.Client, fresh, musterv1.BroadcastJobUIDLabel)
}

// writeShards creates or updates every cluster's Work to carry the planned shard. raced
// is true when a Work to create already existed.
func (r *Reconciler) writeShards(ctx context.Context, job *musterv1.BroadcastJob, works map[string]*musterv1.Work, planned map[string]shardSpec) (raced bool, err error) {
	podSecurity, err := shards.PodSecurityOf(ctx, r.Client, r.PodSecurityLevel, job.Namespace)
	if err != nil {
		return false, err
	}
	clusters := slices.Sorted(maps.Keys(planned))
	wants := make([]*musterv1.Work, len(clusters))
	for i, cluster := range clusters {
		want, err := newWork(job, cluster, planned[cluster])
		if err != nil {
			return false, err
		}
		shards.SetPodSecurity(want, podSecurity)
		wants[i] = want
	}
	var anyRaced atomic.Bool
	errs := shards.Each(len(clusters), func(i int) error {
		cluster, want := clusters[i], wants[i]
		cur, ok := works[cluster]
		if !ok {
			err := r.Client.Create(ctx, want)
			switch {
			case apierrors.IsAlreadyExists(err):
				anyRaced.Store(true)
			case err != nil:
				return fmt.Errorf("creating the shard for cluster %s: %w", cluster, err)
			default:
				hubmetrics.PlacementDecisions.WithLabelValues("BroadcastJob", hubmetrics.OutcomePlaced).Inc()
				log.FromContext(ctx).V(2).Info("placed a shard of the BroadcastJob", "cluster", cluster)
			}
			return nil
		}
		h := patch.NewHelper(r.Client, cur)
		cur.Spec = want.Spec
		shards.SetPodSecurity(cur, podSecurity)
		if err := h.Patch(ctx, cur); err != nil {
			return fmt.Errorf("updating the shard for cluster %s: %w", cluster, err)
		}
		return nil
	})
	return anyRaced.Load(), errors.Join(errs...)
}

// deleteAfterTTL deletes a finished job once its ttlSecondsAfterFinished passed; the
// finalizer then removes every shard.
func (r *Reconciler) deleteAfterTTL(ctx context.Context, job *musterv1.BroadcastJob) (ctrl.Result, error) {
	left, ok := bcj.TTLLeft(job, r.Clock.Now())
	if !ok {
		return ctrl.Result{}, nil
	}
	if left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := r.Client.Delete(ctx, job, client.Preconditions{UID: &job.UID}); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("deleting the job after its TTL: %w", err)
	}
	log.FromContext(ctx).Info("deleted BroadcastJob after ttlSecondsAfterFinished")
	return ctrl.Result{}, nil
}

// announceMoves counts and announces the evictions a written status records.
func (r *Reconciler) announceMoves(job *musterv1.BroadcastJob, moves moved) {
	hubmetrics.Failovers.WithLabelValues("BroadcastJob").Add(float64(moves.evicted))
	for _, e := range moves.events {
		r.Recorder.Eventf(job, nil, e.eventType, e.reason, "Evict", "%s", e.note)
	}
}
