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
// instead of being reported; any other error is returned.
func Requeue(err error) (ctrl.Result, error) {
	if LostRace(err) {
		return ctrl.Result{RequeueAfter: RetryAfter}, nil
	}
	return ctrl.Result{}, err
}

// LostRace reports whether err is a conflict or ErrStale, which a fresh read resolves.
func LostRace(err error) bool {
	return apierrors.IsConflict(err) || errors.Is(err, ErrStale)
}
