package patch

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// RetryAfter is how soon a reconcile that lost a write race, or read an object older than
// its own last write, runs again: long enough for the cache to catch up.
const RetryAfter = 100 * time.Millisecond

// Requeue is the result of a reconcile that ends with err: a conflict (another writer
// changed the object first) or ErrStale is retried after RetryAfter from a fresh read
// instead of being reported; a write refused as invalid, or held back since one was
// (RefusedError), after its backoff, already logged by Refusals; any other error is
// returned.
func Requeue(err error) (ctrl.Result, error) {
	if LostRace(err) {
		return ctrl.Result{RequeueAfter: RetryAfter}, nil
	}
	if wait, ok := Refused(err); ok {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return ctrl.Result{}, err
}

// Requeues reports whether Requeue turns err into a requeue without an error: a lost
// race, or a write refused as invalid.
func Requeues(err error) bool {
	_, refused := Refused(err)
	return refused || LostRace(err)
}

// LostRace reports whether err is a conflict or ErrStale, which a fresh read resolves.
func LostRace(err error) bool {
	return apierrors.IsConflict(err) || errors.Is(err, ErrStale)
}

// Soonest is the earlier of two requeue delays, zero meaning none: what a reconcile that
// has several reasons to look again asks for.
func Soonest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
