package eventrelay

import (
	"context"
	"fmt"
	"sync"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	apiwork "github.com/musterhq/muster/api/work"
)

// relayedEvent is the member event (by UID) and the occurrences of it already relayed.
type relayedEvent struct {
	uid   types.UID
	count int32
}

// Reconciler relays the member's Warning events to the hub Works they concern.
type Reconciler struct {
	// Member reads the member's events and the objects they are about (cached).
	Member client.Reader
	// Hub reads the Works in the cluster's hub namespace.
	Hub client.Reader
	// Recorder records events on the hub.
	Recorder events.EventRecorder
	// Cluster is this member's name, in every relayed note.
	Cluster string
	// Budget is how many events each Work may receive; the zero value is DefaultBudget.
	Budget Budget

	mu sync.Mutex
	// relayed is what was relayed of each cached member event; an entry goes with its
	// event, which the API server expires after an hour.
	relayed map[types.NamespacedName]relayedEvent
	budgets *budgets
}

// WarningEvents is how the manager's cache should hold events for the relay: only the
// Warning ones, without managed fields. A member's Normal events far outnumber them and
// are not relayed.
func WarningEvents() cache.ByObject {
	return cache.ByObject{
		Field:     fields.OneTermEqualSelector("type", corev1.EventTypeWarning),
		Transform: cache.TransformStripManagedFields(),
	}
}

// SetupWithManager watches the events the manager's cache holds (configure it with
// WarningEvents).
func (r *Reconciler) SetupWithManager(mgr manager.Manager) error {
	r.relayed = map[types.NamespacedName]relayedEvent{}
	r.budgets = newBudgets(r.Budget.orDefault())
	return ctrl.ControllerManagedBy(mgr).Named("event-relay").For(&corev1.Event{}).Complete(r)
}

// Reconcile relays one member event, or forgets it once it is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var ev corev1.Event
	if err := r.Member.Get(ctx, req.NamespacedName, &ev); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if ev.Type != corev1.EventTypeWarning {
		return reconcile.Result{}, nil
	}
	count := occurrences(&ev)
	if !r.isNew(req.NamespacedName, ev.UID, count) {
		return reconcile.Result{}, nil
	}
	workName, err := r.workOf(ctx, ev.InvolvedObject)
	if err != nil || workName == "" {
		return reconcile.Result{}, err
	}
	var work musterv1.Work
	key := types.NamespacedName{Namespace: musterv1.MemberNamespace(r.Cluster), Name: workName}
	if err := r.Hub.Get(ctx, key, &work); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.markRelayed(req.NamespacedName, ev.UID, count)
	if !r.budgets.take(workName) {
		log.FromContext(ctx).V(2).Info("dropped a member event: the Work used its event budget", "work", workName, "reason", ev.Reason)
		return reconcile.Result{}, nil
	}
	r.Recorder.Eventf(&work, memberObject(ev.InvolvedObject), corev1.EventTypeWarning, ev.Reason, "Relay", "%s", note(r.Cluster, &ev))
	return reconcile.Result{}, nil
}

// workOf names the Work behind the object an event is about: a Job or BroadcastJob the
// agent applied carries apiwork.Label, and a pod belongs to one of them through its
// controller reference. It returns "" for anything else.
func (r *Reconciler) workOf(ctx context.Context, about corev1.ObjectReference) (string, error) {
	switch about.Kind {
	case "Pod":
		var pod corev1.Pod
		// The agent caches only its own controllers' pods; any other pod is not found.
		if err := r.Member.Get(ctx, types.NamespacedName{Namespace: about.Namespace, Name: about.Name}, &pod); err != nil {
			return "", client.IgnoreNotFound(err)
		}
		owner := metav1.GetControllerOf(&pod)
		if owner == nil || pod.UID != about.UID {
			return "", nil
		}
		return r.workOf(ctx, corev1.ObjectReference{Kind: owner.Kind, APIVersion: owner.APIVersion, Namespace: pod.Namespace, Name: owner.Name, UID: owner.UID})
	case "Job":
		if about.APIVersion != batchv1.SchemeGroupVersion.String() {
			return "", nil
		}
		return r.workLabel(ctx, about, &batchv1.Job{})
	case "BroadcastJob":
		if about.APIVersion != musterv1.GroupVersion.String() {
			return "", nil
		}
		return r.workLabel(ctx, about, &musterv1.BroadcastJob{})
	}
	return "", nil
}

func (r *Reconciler) workLabel(ctx context.Context, about corev1.ObjectReference, obj client.Object) (string, error) {
	if err := r.Member.Get(ctx, types.NamespacedName{Namespace: about.Namespace, Name: about.Name}, obj); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	if about.UID != "" && obj.GetUID() != about.UID {
		return "", nil
	}
	return obj.GetLabels()[apiwork.Label], nil
}

// isNew reports whether the event happened more often than was relayed of it.
func (r *Reconciler) isNew(key types.NamespacedName, uid types.UID, count int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen, ok := r.relayed[key]
	return !ok || seen.uid != uid || count > seen.count
}

func (r *Reconciler) markRelayed(key types.NamespacedName, uid types.UID, count int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.relayed[key] = relayedEvent{uid: uid, count: count}
}

func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.relayed, key)
}

// occurrences is how often the event happened, by whichever counter its writer keeps.
func occurrences(ev *corev1.Event) int32 {
	n := max(ev.Count, 1)
	if ev.Series != nil {
		n = max(n, ev.Series.Count)
	}
	return n
}

// memberObject is the member object an event is about, as the relayed event's related
// object. The hub's recorder folds events with the same regarding, related and reason
// into one series, so this keeps two pods' warnings apart while one pod's repeats fold,
// as they do in the member.
func memberObject(about corev1.ObjectReference) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: about.APIVersion, Kind: about.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: about.Namespace, Name: about.Name, UID: about.UID},
	}
}

// maxNote is the events.k8s.io limit on an event's note.
const maxNote = 1024

// note says where the event happened and what it said, within the API's limit.
func note(cluster string, ev *corev1.Event) string {
	s := fmt.Sprintf("%s: %s %s/%s: %s", cluster, ev.InvolvedObject.Kind, ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, ev.Message)
	if len(s) <= maxNote {
		return s
	}
	// Cut at a rune boundary so the note stays valid UTF-8.
	cut := maxNote - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
