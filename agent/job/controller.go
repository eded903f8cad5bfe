// Package job is the agent's Job controller: it runs the batch/v1 Jobs whose
// spec.managedBy is muster.dev/agent, with the behaviour of the Kubernetes v1.36 built-in
// controller (which leaves those Jobs alone) and within the API server's rules for Jobs
// managed by another controller.
package job

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mchandler "sigs.k8s.io/multicluster-runtime/pkg/handler"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"

	"github.com/musterhq/muster/agent/expectations"
	"github.com/musterhq/muster/agent/percluster"
	"github.com/musterhq/muster/agent/podcontrol"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/patch"
)

// expectationsTTL bounds how long a reconcile waits for the cache to show its writes.
const expectationsTTL = time.Minute

// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get;update;patch
// Pods name their Job as controller with blockOwnerDeletion, which clusters running the
// OwnerReferencesPermissionEnforcement admission plugin allow only with this.
// +kubebuilder:rbac:groups=batch,resources=jobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;patch;delete

// Reconciler runs agent-managed Jobs in the clusters its manager engages: the agent's
// own member, its local cluster. A request names its cluster; the cluster's client,
// recorder, expectations and backoff are a clusterReconciler's.
type Reconciler struct {
	Manager mcmanager.Manager
	Clock   clock.PassiveClock
	// Workers is the number of Jobs reconciled in parallel.
	Workers int
	// BatchPeriod bounds how long a change of a Job's pods or status waits for the round
	// that handles it, so that the changes of many pods are handled, and the status
	// written, once: the built-in controller waits this long (1s) after every change.
	BatchPeriod time.Duration
	// BatchQuiet is the pause in a Job's changes after which they are handled without
	// waiting out BatchPeriod (see batching); zero waits BatchPeriod, as upstream.
	BatchQuiet time.Duration

	clusters percluster.Store[*clusterReconciler]
}

// clusterReconciler runs the agent-managed Jobs of one cluster.
type clusterReconciler struct {
	Client       client.Client
	Recorder     events.EventRecorder
	Clock        clock.PassiveClock
	expectations *expectations.Expectations
	backoff      *backoffStore
	rounds       *rounds
	// refusals paces the status writes of Jobs after the API server refused one as
	// invalid.
	refusals *patch.Refusals
}

func newClusterReconciler(cl cluster.Cluster, clk clock.PassiveClock, b batching) *clusterReconciler {
	return &clusterReconciler{
		Client:       cl.GetClient(),
		Recorder:     cl.GetEventRecorder("muster-job"),
		Clock:        clk,
		expectations: expectations.New(expectationsTTL, clk.Now),
		backoff:      newBackoffStore(),
		rounds:       newRounds(b, clock.RealClock{}),
		// Real time, as the work queue's: the tests' clock only moves by hand.
		refusals: &patch.Refusals{},
	}
}

// batching is the reconciler's BatchPeriod and BatchQuiet.
func (r *Reconciler) batching() batching {
	quiet := r.BatchQuiet
	if quiet <= 0 {
		quiet = r.BatchPeriod
	}
	return batching{Period: r.BatchPeriod, Quiet: quiet}
}

// SetupWithManager watches agent-managed Jobs and their pods in the local cluster only:
// the provider's clusters are the hub, whose Jobs are not the agent's to run.
func (r *Reconciler) SetupWithManager(mgr mcmanager.Manager) error {
	r.clusters.New = func(cl cluster.Cluster) *clusterReconciler { return newClusterReconciler(cl, r.Clock, r.batching()) }
	return mcbuilder.ControllerManagedBy(mgr).
		Named("job").
		Watches(&batchv1.Job{}, r.jobChanges, percluster.EngageLocal, percluster.IgnoreProviders,
			mcbuilder.WithPredicates(predicate.NewPredicateFuncs(managedByAgent))).
		Watches(&corev1.Pod{}, r.batchedOwner, percluster.EngageLocal, percluster.IgnoreProviders).
		WithOptions(controller.TypedOptions[mcreconcile.Request]{MaxConcurrentReconciles: max(r.Workers, 1)}).
		Complete(r)
}

// Reconcile runs one round of a Job in the cluster the request names.
func (r *Reconciler) Reconcile(ctx context.Context, req mcreconcile.Request) (ctrl.Result, error) {
	c, err := r.clusters.Get(ctx, r.Manager, req.ClusterName)
	if err != nil {
		return ctrl.Result{}, percluster.IgnoreGone(err)
	}
	return c.Reconcile(ctx, req.Request)
}

// roundsOf is the rounds of the cluster named name, as its event handlers see them.
func (r *Reconciler) roundsOf(ctx context.Context, name multicluster.ClusterName) (*rounds, bool) {
	c, err := r.clusters.Get(ctx, r.Manager, name)
	if err != nil {
		// Reconcile sorts out a cluster that is gone; the Job is queued at once.
		return nil, false
	}
	return c.rounds, true
}

// inRound adds the Job key names to q for the round that handles its changes. A change
// that frees a pod's slot also adds it Quiet later (the queue keeps a key's earliest
// wait), for the pods that replace those that finished meanwhile, should the round come
// later (see replaceEarly).
func (r *Reconciler) inRound(ctx context.Context, name multicluster.ClusterName, key reconcile.Request, freesSlot bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	rs, ok := r.roundsOf(ctx, name)
	if !ok {
		q.Add(key)
		return
	}
	wait := rs.changed(key.NamespacedName)
	if freesSlot {
		wait = min(wait, rs.Quiet)
	}
	q.AddAfter(key, wait)
}

// atOnce adds the Job key names to q for a round at once.
func (r *Reconciler) atOnce(ctx context.Context, name multicluster.ClusterName, key reconcile.Request, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if rs, ok := r.roundsOf(ctx, name); ok {
		rs.urgent(key.NamespacedName)
	}
	q.Add(key)
}

// jobChanges enqueues a Job at once when it appears or its spec changes, and in its next
// batched round when only its status or metadata changed: those updates are mostly this
// controller's own writes, and reacting at once would write again for little.
func (r *Reconciler) jobChanges(name multicluster.ClusterName, _ cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	key := func(o client.Object) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}
	}
	return mchandler.ForCluster(handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.atOnce(ctx, name, key(e.Object), q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration() || e.ObjectNew.GetDeletionTimestamp() != nil {
				r.atOnce(ctx, name, key(e.ObjectNew), q)
				return
			}
			r.inRound(ctx, name, key(e.ObjectNew), false, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.atOnce(ctx, name, key(e.Object), q)
		},
	}, name)
}

// batchedOwner enqueues a pod's Job in its next batched round: the changes of many pods
// share one; a pod that just succeeded also brings the pod that replaces it forward (see
// inRound). A pod no controller owns enqueues the Jobs of its
// cluster that may adopt it.
func (r *Reconciler) batchedOwner(name multicluster.ClusterName, cl cluster.Cluster) handler.TypedEventHandler[client.Object, mcreconcile.Request] {
	jobs := cl.GetClient()
	enqueue := func(ctx context.Context, o client.Object, succeeded bool, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		ref := metav1.GetControllerOf(o)
		if ref == nil {
			r.enqueueAdopters(ctx, jobs, name, o, q)
			return
		}
		if ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			return
		}
		key := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}
		r.inRound(ctx, name, key, succeeded, q)
	}
	return mchandler.ForCluster(handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, false, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, justSucceeded(e.ObjectOld, e.ObjectNew), q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, false, q)
		},
	}, name)
}

// enqueueAdopters enqueues the agent-managed Jobs whose selector matches a pod no
// controller owns: one of them adopts it.
func (r *Reconciler) enqueueAdopters(ctx context.Context, c client.Reader, name multicluster.ClusterName, pod client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if pod.GetDeletionTimestamp() != nil {
		return
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(pod.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "listing the Jobs that may adopt a pod", "pod", pod.GetName())
		return
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !managedByAgent(job) || job.Spec.Selector == nil {
			continue
		}
		if selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector); err == nil && !selector.Empty() && selector.Matches(labels.Set(pod.GetLabels())) {
			r.inRound(ctx, name, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)}, false, q)
		}
	}
}

func managedByAgent(o client.Object) bool {
	job, ok := o.(*batchv1.Job)
	return ok && ptr.Deref(job.Spec.ManagedBy, "") == musterv1.AgentManagedBy
}

// Reconcile runs one round of the Job's life: record the pods that finished, decide
// whether the job ends, bring the active pods to what it needs, and write the status.
// A Job whose changes still wait for their round only gets the pods that replace those
// that succeeded; the round comes back when due.
func (r *clusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if wait := r.rounds.wait(req.NamespacedName); wait > 0 {
		unseen, err := r.replaceEarly(ctx, req)
		if err != nil {
			return ctrl.Result{}, err
		}
		if unseen {
			// Its last pods are not all in the cache yet: look again soon rather than
			// leave the slots of the pods that succeeded meanwhile to the round.
			wait = min(wait, r.rounds.Quiet)
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.rounds.start(req.NamespacedName)
	job := &batchv1.Job{}
	if err := r.Client.Get(ctx, req.NamespacedName, job); err != nil {
		if apierrors.IsNotFound(err) {
			r.expectations.Forget(req.NamespacedName)
			r.rounds.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if jobFinished(&job.Status) || job.DeletionTimestamp != nil {
		r.refusals.Forget(job.UID)
	}
	if !managedByAgent(job) {
		return ctrl.Result{}, nil
	}
	pods, err := r.pods(ctx, job)
	if err != nil {
		return ctrl.Result{}, err
	}
	if jobFinished(&job.Status) {
		r.rounds.forget(req.NamespacedName)
		return r.afterFinish(ctx, job, pods)
	}
	if !r.expectations.Satisfied(req.NamespacedName, pods) {
		// The pod events that satisfy them requeue the job; the TTL bounds the wait.
		return ctrl.Result{RequeueAfter: expectationsTTL}, nil
	}
	result, err := r.sync(ctx, job, pods)
	if patch.Requeues(err) {
		return patch.Requeue(err)
	}
	return result, err
}

func (r *clusterReconciler) sync(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (ctrl.Result, error) {
	now := r.Clock.Now()
	status := job.Status.DeepCopy()
	if status.StartTime == nil && !suspended(job) {
		status.StartTime = &metav1.Time{Time: now}
	}

	// 1. Count the pods an earlier round recorded and released, then record the pods that
	// finished since, and decide whether the job ends.
	settle(job, status, pods, nil)
	t := countFinished(job, status, pods)
	activePods := slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return !podActive(p) })
	retry, keep := retries(job, pods, t)
	end := decideEnd(job, status, pods, t, int32(len(activePods)), now)
	release := record(job, status, pods, t, end, keep)
	backoff := r.backoff.update(job.UID, t.newSucceeded, slices.Concat(t.newFailed, t.newIgnored))

	// 2. Stop or start pods.
	var requeue time.Duration
	var deleted, created int32
	var writeErr error
	switch {
	case end != nil:
		deleted, writeErr = r.deletePods(ctx, job, activePods, false)
	case job.DeletionTimestamp == nil:
		var toDelete []*corev1.Pod
		var toCreate []int
		toDelete, toCreate, requeue = plan(job, t, activePods, pods, backoff, retry, now)
		// Pods removed by a scale-down or a suspension are not failures.
		deleted, writeErr = r.deletePods(ctx, job, toDelete, true)
		if writeErr == nil {
			created, writeErr = r.createPods(ctx, job, toCreate, retry)
		}
	}

	// 3. Write the status in one go: counts, the pods just recorded, the end.
	var ready, terminating int32
	for _, p := range pods {
		switch {
		case podTerminating(p):
			terminating++
		case podActive(p) && podReady(p):
			ready++
		}
	}
	status.Active = int32(len(activePods)) - deleted + created
	status.Terminating = ptr.To(terminating + deleted)
	status.Ready = ptr.To(min(ready, status.Active))
	if end == nil {
		r.reportSuspension(job, status, now)
		reportUnschedulable(status, activePods, metav1.NewTime(now))
	} else if len(status.UncountedTerminatedPods.Succeeded)+len(status.UncountedTerminatedPods.Failed) == 0 &&
		len(release) == 0 && status.Active == 0 && *status.Terminating == 0 {
		finish(status, end, now)
	}
	if err := r.writeStatus(ctx, job, status); err != nil {
		return ctrl.Result{}, err
	}

	// 4. Only now that the status holds them, release the recorded pods; the next round
	// counts them. One status write per round, like one round per batch of pod events.
	if err := r.release(ctx, job, release); err != nil {
		return ctrl.Result{}, err
	}
	if jobFinished(&job.Status) {
		r.reportFinished(job)
		r.backoff.forget(job.UID)
		return r.afterFinish(ctx, job, nil)
	}
	if left, ok := deadlineLeft(job, status, now); ok && left > 0 && (requeue == 0 || left < requeue) {
		requeue = left
	}
	return ctrl.Result{RequeueAfter: requeue}, writeErr
}

// plan decides which active pods to delete and which pods to create for a job that is not
// ending: indexes for an Indexed job, noIndex entries for a NonIndexed one. The time to
// requeue says when a backoff ends.
func plan(job *batchv1.Job, t tally, activePods, pods []*corev1.Pod, record backoffRecord, retry map[int]indexRetry, now time.Time) ([]*corev1.Pod, []int, time.Duration) {
	toDelete := surplus(job, t, activePods)
	doomed := map[types.UID]bool{}
	for _, p := range toDelete {
		doomed[p.UID] = true
	}
	var keep []*corev1.Pod
	for _, p := range activePods {
		if !doomed[p.UID] {
			keep = append(keep, p)
		}
	}
	want := wantActive(job, t, int32(len(keep)))
	if extra := int32(len(keep)) - want; extra > 0 {
		toDelete = append(toDelete, sortForDeletion(keep, false)[:extra]...)
		return capped(toDelete), nil, 0
	}
	missing := want - int32(len(keep))
	if onlyReplaceFailed(job) {
		for _, p := range pods {
			if podTerminating(p) {
				missing--
			}
		}
	}
	if missing <= 0 {
		return capped(toDelete), nil, 0
	}
	missing = min(missing, maxPodWritesPerRound)
	if !indexed(job) || job.Spec.BackoffLimitPerIndex == nil {
		if wait := record.remaining(now); wait > 0 {
			return capped(toDelete), nil, wait
		}
	}
	if !indexed(job) {
		create := make([]int, missing)
		for i := range create {
			create[i] = noIndex
		}
		return capped(toDelete), create, 0
	}
	var create []int
	var wait time.Duration
	// Indexes still in their backoff are skipped, so look that many further than missing.
	for _, i := range indexesToStart(job, t, keep, int(missing)+len(retry)) {
		if len(create) == int(missing) {
			break
		}
		if r, ok := retry[i]; ok && r.after.After(now) {
			if left := r.after.Sub(now); wait == 0 || left < wait {
				wait = left
			}
			continue
		}
		create = append(create, i)
	}
	return capped(toDelete), create, wait
}

func capped(pods []*corev1.Pod) []*corev1.Pod {
	return pods[:min(len(pods), maxPodWritesPerRound)]
}

// finish turns the interim condition into the final one, once no pod runs or waits to be
// counted: FailureTarget into Failed, SuccessCriteriaMet into Complete with its time. The
// API server refuses a finished Job without startTime, which a Job suspended before it
// ever ran, or since its pods finished, has none of: it gets the finish time.
func finish(status *batchv1.JobStatus, end *batchv1.JobCondition, now time.Time) {
	if status.StartTime == nil {
		status.StartTime = &metav1.Time{Time: now}
	}
	final := newCondition(batchv1.JobFailed, end.Reason, end.Message, now)
	if end.Type == batchv1.JobSuccessCriteriaMet {
		final = newCondition(batchv1.JobComplete, end.Reason, end.Message, now)
		status.CompletionTime = &metav1.Time{Time: now}
	}
	status.Conditions = append(status.Conditions, *final)
}

// reportSuspension keeps the Suspended condition in line with spec.suspend. A suspended
// job has no startTime and resuming sets it anew: activeDeadlineSeconds counts continuous
// activity. A job being deleted is not reported suspended: it will not run again anyway.
func (r *clusterReconciler) reportSuspension(job *batchv1.Job, status *batchv1.JobStatus, now time.Time) {
	if suspended(job) && job.DeletionTimestamp != nil {
		return
	}
	if suspended(job) {
		status.StartTime = nil
	}
	var cond *batchv1.JobCondition
	for i := range status.Conditions {
		if status.Conditions[i].Type == batchv1.JobSuspended {
			cond = &status.Conditions[i]
		}
	}
	ts := metav1.NewTime(now)
	switch {
	case suspended(job) && (cond == nil || cond.Status != corev1.ConditionTrue):
		if cond == nil {
			status.Conditions = append(status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuspended})
			cond = &status.Conditions[len(status.Conditions)-1]
		}
		cond.Status, cond.Reason, cond.Message, cond.LastProbeTime, cond.LastTransitionTime = corev1.ConditionTrue, musterv1.JobReasonSuspended, "Job suspended", ts, ts
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.JobEventReasonSuspended, "Suspend", "Job suspended")
	case !suspended(job) && cond != nil && cond.Status == corev1.ConditionTrue:
		cond.Status, cond.Reason, cond.Message, cond.LastProbeTime, cond.LastTransitionTime = corev1.ConditionFalse, musterv1.JobReasonResumed, "Job resumed", ts, ts
		status.StartTime = &ts
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.JobEventReasonResumed, "Resume", "Job resumed")
	}
}

func (r *clusterReconciler) reportFinished(job *batchv1.Job) {
	if c := findCondition(&job.Status, batchv1.JobComplete); c != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.JobEventReasonCompleted, "Complete", "Job completed")
		return
	}
	if c := findCondition(&job.Status, batchv1.JobFailed); c != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, c.Reason, "Fail", "%s", c.Message)
	}
}

// pods lists the job's pods: those it controls that match its selector, and the orphans
// that match it, which it adopts as the built-in controller does (a Job recreated with
// the selector of one deleted with --cascade=orphan takes over its pods). Only pods the
// agent caches can be adopted: those that carry muster.dev/controller, as the pods of a
// Job the agent ran do.
func (r *clusterReconciler) pods(ctx context.Context, job *batchv1.Job) ([]*corev1.Pod, error) {
	selector, err := jobSelector(job)
	if err != nil {
		return nil, err
	}
	return r.podControl().List(ctx, job, selector, adopter{r: r, job: job})
}

// podControl writes the job's pods and records the writes in its expectations.
func (r *clusterReconciler) podControl() podcontrol.Control {
	return podcontrol.Control{Client: r.Client, Expectations: r.expectations, Kind: "Job"}
}

// jobSelector is the job's pod selector; a Job the API server stored always has one, and
// without it the pods are found by the label it would have generated.
func jobSelector(job *batchv1.Job) (labels.Selector, error) {
	if job.Spec.Selector == nil {
		return labels.SelectorFromSet(labels.Set{batchv1.ControllerUidLabel: string(job.UID)}), nil
	}
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("the job's selector: %w", err)
	}
	return selector, nil
}

// adopter takes over the orphans that match a running job's selector.
type adopter struct {
	r   *clusterReconciler
	job *batchv1.Job
}

func (a adopter) Adoptable(p *corev1.Pod) bool { return adoptable(a.job, p) }

func (a adopter) Adopt(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return a.r.adopt(ctx, a.job, p)
}

// adoptable: a pod matching the job's selector that no controller owns, while the job
// runs and the pod is not being deleted.
func adoptable(job *batchv1.Job, p *corev1.Pod) bool {
	return metav1.GetControllerOfNoCopy(p) == nil && p.DeletionTimestamp == nil &&
		job.DeletionTimestamp == nil && !jobFinished(&job.Status)
}

// adopt makes the job the pod's controller and puts the tracking finalizer on it, so that
// its finish is counted like its own pods'. The pod's UID in the patch makes it fail on a
// pod recreated under the same name. It returns the adopted pod, or nil when the pod went
// away or another controller took it first.
func (r *clusterReconciler) adopt(ctx context.Context, job *batchv1.Job, p *corev1.Pod) (*corev1.Pod, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":             p.UID,
		"ownerReferences": []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))},
		"finalizers":      []string{trackingFinalizer},
	}})
	if err != nil {
		return nil, fmt.Errorf("adopting pod %s: %w", p.Name, err)
	}
	adopted := p.DeepCopy()
	if err := r.Client.Patch(ctx, adopted, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || apierrors.IsConflict(err) {
			// Gone, replaced, or another controller's by now (the API server refuses a
			// second controller): not ours.
			log.FromContext(ctx).V(1).Info("pod not adopted", "pod", p.Name, "reason", err.Error())
			return nil, nil
		}
		return nil, fmt.Errorf("adopting pod %s: %w", p.Name, err)
	}
	log.FromContext(ctx).Info("adopted an orphan pod", "pod", p.Name)
	return adopted, nil
}

// writeStatus stores status when it changed; job then holds what the server returned. A
// write refused as invalid holds the Job's next writes back (see patch.Refusals).
func (r *clusterReconciler) writeStatus(ctx context.Context, job *batchv1.Job, status *batchv1.JobStatus) error {
	if equality.Semantic.DeepEqual(&job.Status, status) {
		return nil
	}
	if err := r.refusals.Check(job); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	job.Status = *status
	if err := r.refusals.Observe(ctx, r.Recorder, job, r.Client.Status().Update(ctx, job)); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// release removes the tracking finalizer from pods whose finish the status holds.
func (r *clusterReconciler) release(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) error {
	return r.podControl().Release(ctx, job, pods, trackingFinalizer)
}

// deletePods deletes pods; with release, it removes their tracking finalizer first, so
// that they are not counted as failed.
func (r *clusterReconciler) deletePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, release bool) (int32, error) {
	var releaseFirst string
	if release {
		releaseFirst = trackingFinalizer
	}
	deleted, err := r.podControl().Delete(ctx, job, pods, releaseFirst)
	if len(deleted) > 0 {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.ReasonSuccessfulDelete, "Delete", "Deleted %d pods", len(deleted))
	}
	return int32(len(deleted)), err
}

// createPods creates the pods of indexes in slow-start batches: a template that cannot be
// created fails once, not once per pod. A pod the API server refused is not counted.
func (r *clusterReconciler) createPods(ctx context.Context, job *batchv1.Job, indexes []int, retry map[int]indexRetry) (int32, error) {
	pods := make([]*corev1.Pod, len(indexes))
	for k, i := range indexes {
		pods[k] = newPod(job, i, retry[i])
	}
	created, err := r.podControl().Create(ctx, job, pods)
	if err != nil {
		r.Recorder.Eventf(job, nil, corev1.EventTypeWarning, musterv1.ReasonFailedCreate, "Create", "%v", err)
	}
	if created > 0 {
		r.Recorder.Eventf(job, nil, corev1.EventTypeNormal, musterv1.ReasonSuccessfulCreate, "Create", "Created %d pods", created)
	}
	return created, err
}

// afterFinish releases any pod a finished job still holds and deletes the job once its
// ttlSecondsAfterFinished passed.
func (r *clusterReconciler) afterFinish(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (ctrl.Result, error) {
	var held []*corev1.Pod
	for _, p := range pods {
		if hasFinalizer(p) {
			held = append(held, p)
		}
	}
	if err := r.release(ctx, job, held); err != nil {
		return ctrl.Result{}, err
	}
	ttl := job.Spec.TTLSecondsAfterFinished
	if ttl == nil {
		return ctrl.Result{}, nil
	}
	finished := job.Status.CompletionTime
	if c := findCondition(&job.Status, batchv1.JobFailed); c != nil {
		finished = &c.LastTransitionTime
	}
	if finished == nil {
		return ctrl.Result{}, nil
	}
	if left := finished.Add(time.Duration(*ttl) * time.Second).Sub(r.Clock.Now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	if err := r.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID}); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("deleting the job after its TTL: %w", err)
	}
	log.FromContext(ctx).Info("deleted Job after ttlSecondsAfterFinished")
	return ctrl.Result{}, nil
}
