package patch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// The backoff of an object's writes after the API server refused one as invalid: the
// first retry after refusedBase, doubling up to refusedMax.
const (
	refusedBase = time.Second
	refusedMax  = 5 * time.Minute
)

// RefusedError says a write was not made, or was made and refused as invalid (Err is then
// the API server's answer): the object's writes wait until Wait has passed. Requeue turns
// it into a requeue after Wait, with no error for the work queue to log and retry sooner.
type RefusedError struct {
	Wait time.Duration
	Err  error
}

func (e *RefusedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("the object's writes wait %v after the API server refused one as invalid", e.Wait)
	}
	return fmt.Sprintf("refused as invalid, retried in %v: %v", e.Wait, e.Err)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Refused reports whether err is a *RefusedError, and the wait it asks for.
func Refused(err error) (time.Duration, bool) {
	var r *RefusedError
	if errors.As(err, &r) {
		return r.Wait, true
	}
	return 0, false
}

// Refusals paces the writes of objects whose last write the API server refused as
// invalid (422). Such a refusal is a bug, the controller's or the object's, that writing
// the same again does not fix: without pacing, every event that brings the object back
// (its pods, its Works), and the work queue's retries from 5 ms, would send it again at
// full speed. With it, an object's writes wait 1 s after the first refusal, doubling up to
// 5 minutes, whatever brings the object back; a user's change of its spec (a new
// generation) ends the wait, as may the fix it needs. A refusal that starts a series, or
// whose message changed, is logged as an error and announced as a Warning event on the
// object (reason StatusWriteRefused); the others only at V(2). The zero value is ready to
// use.
type Refusals struct {
	// Clock times the backoff; the real clock when nil.
	Clock clock.PassiveClock

	mu      sync.Mutex
	objects map[types.UID]*refusal
	// swept is when entries of objects no longer written were last dropped.
	swept time.Time
}

// refusal is what is remembered of an object's refusals in a row.
type refusal struct {
	generation int64
	count      int
	until      time.Time
	message    string
}

// Check returns a *RefusedError when obj's writes still wait out the backoff of a
// refusal, and nil when a write may go. A nil Refusals never holds a write back.
func (r *Refusals) Check(obj client.Object) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.objects[obj.GetUID()]
	if !ok {
		return nil
	}
	if f.generation != obj.GetGeneration() {
		// The spec changed since: the write it asks for may well be accepted.
		delete(r.objects, obj.GetUID())
		return nil
	}
	if wait := f.until.Sub(r.now()); wait > 0 {
		return &RefusedError{Wait: wait}
	}
	return nil
}

// Observe records the outcome err of a write to obj. A refusal as invalid extends obj's
// backoff, is logged and, when news, announced through rec (when not nil), and comes
// back as a *RefusedError wrapping err; a success ends the backoff; any other error comes
// back as it is.
func (r *Refusals) Observe(ctx context.Context, rec events.EventRecorder, obj client.Object, err error) error {
	if r == nil {
		return err
	}
	if err == nil {
		r.Forget(obj.GetUID())
		return nil
	}
	if !apierrors.IsInvalid(err) {
		return err
	}
	wait, news := r.record(obj, err.Error())
	refused := &RefusedError{Wait: wait, Err: err}
	logger := log.FromContext(ctx)
	if !news {
		logger.V(2).Info("a write was refused as invalid again", "retryIn", wait, "reason", err.Error())
		return refused
	}
	logger.Error(err, "the API server refused a write as invalid; it is retried with a growing backoff", "retryIn", wait)
	if rec != nil {
		rec.Eventf(obj, nil, corev1.EventTypeWarning, musterv1.ReasonStatusWriteRefused, "Update",
			"the API server refused the controller's write as invalid (retried with a growing backoff, next in %v): %v", wait, err)
	}
	return refused
}

// record notes one refusal of obj's write with message: how long its writes now wait,
// and whether the refusal is news (the first in a row, or a different message).
func (r *Refusals) record(obj client.Object, message string) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.objects == nil {
		r.objects = map[types.UID]*refusal{}
	}
	r.sweep()
	f, ok := r.objects[obj.GetUID()]
	if !ok || f.generation != obj.GetGeneration() {
		f = &refusal{generation: obj.GetGeneration()}
		r.objects[obj.GetUID()] = f
	}
	news := f.count == 0 || f.message != message
	wait := refusedBackoff(f.count)
	f.count++
	f.message = message
	f.until = r.now().Add(wait)
	return wait, news
}

// sweep drops, at most once per refusedMax, the entries whose backoff ended more than
// refusedMax ago: an object still refused is written again within its backoff, so such an
// entry is most likely of an object deleted meanwhile, which no success would ever
// forget. Should it be alive after all, its next refusal starts a new series. r.mu is held.
func (r *Refusals) sweep() {
	now := r.now()
	if now.Sub(r.swept) < refusedMax {
		return
	}
	r.swept = now
	for uid, f := range r.objects {
		if now.Sub(f.until) > refusedMax {
			delete(r.objects, uid)
		}
	}
}

// refusedBackoff is the wait after the (count+1)th refusal in a row.
func refusedBackoff(count int) time.Duration {
	wait := refusedBase
	for range count {
		wait *= 2
		if wait >= refusedMax {
			return refusedMax
		}
	}
	return wait
}

// Forget drops what is remembered of an object: its write went through, or it is gone.
func (r *Refusals) Forget(uid types.UID) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.objects, uid)
}

func (r *Refusals) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
