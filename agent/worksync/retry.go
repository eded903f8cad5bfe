package worksync

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// A manifest the member refused is tried again without the Work changing: the member's
// admin may bind the executor a role, a CRD may be installed, a terminating namespace may
// go. The wait is as long as the manifest has been failing, between these bounds: it
// doubles from one try to the next, so a Work nobody fixes costs one apply every five
// minutes, not one every few seconds.
const (
	refusedRetryMin = 2 * time.Second
	refusedRetryMax = 5 * time.Minute
)

// retryable says whether trying the same manifest again can succeed without the Work
// changing. A manifest that does not decode, is a duplicate, is invalid or conflicts with
// another field manager fails the same way until someone edits the Work (or forces).
func retryable(err error) bool {
	switch {
	case err == nil, errorsIsInvalidManifest(err), errors.As(err, new(duplicateManifest)):
		return false
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsConflict(err):
		return false
	}
	return true
}

// retryDelay is the wait before the next try of a manifest that has been failing for
// failingFor.
func retryDelay(failingFor time.Duration) time.Duration {
	return min(max(failingFor, refusedRetryMin), refusedRetryMax)
}

// nextAttempt returns when to try the Work again, if some manifest failed in a way a retry
// can fix: the shortest of their delays, each counted from its Applied=False transition in
// reported (the status just written), so restarts do not reset the backoff.
func nextAttempt(reported []musterv1.ManifestStatus, outcomes []outcome, now time.Time) (time.Duration, bool) {
	since := map[int32]time.Time{}
	for _, m := range reported {
		if c := meta.FindStatusCondition(m.Conditions, musterv1.WorkApplied); c != nil {
			since[m.Ordinal] = c.LastTransitionTime.Time
		}
	}
	var after time.Duration
	found := false
	for _, o := range outcomes {
		if !retryable(o.err) {
			continue
		}
		failingFor := time.Duration(0)
		if t, ok := since[int32(o.ordinal)]; ok && !t.IsZero() {
			failingFor = now.Sub(t)
		}
		d := retryDelay(failingFor)
		if !found || d < after {
			after, found = d, true
		}
	}
	return after, found
}
