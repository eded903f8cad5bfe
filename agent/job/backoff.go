package job

import (
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod recreation backoff, as the built-in controller: 10s after the first failure since
// the last success, doubling with each further failure, at most 10 minutes.
const (
	backoffBase = 10 * time.Second
	backoffMax  = 10 * time.Minute
)

// backoffDelay is the wait before replacing a pod after failures consecutive failures.
func backoffDelay(failures int32) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := backoffBase
	for i := int32(1); i < failures && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// backoffRecord is a job's failures since its last success and when the last one was.
// Like the built-in controller's, it lives in memory: a restart forgets the wait, which
// costs an early retry, never a lost pod.
type backoffRecord struct {
	failures    int32
	lastFailure time.Time
}

type backoffStore struct {
	mu      sync.Mutex
	records map[types.UID]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{records: map[types.UID]backoffRecord{}} }

// update folds pods that finished since the last update into the job's record and stores
// it (see fold).
func (s *backoffStore) update(uid types.UID, succeeded, failed []*corev1.Pod) backoffRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.records[uid].fold(succeeded, failed)
	s.records[uid] = r
	return r
}

// fold is the record with pods that finished since folded in, in the order they
// finished: a success resets the count, a failure adds one. A success that finished no
// later than the last failure already folded (seen in a later round, as one is under load
// when the two are written close together) resets nothing: the failure came after it.
func (r backoffRecord) fold(succeeded, failed []*corev1.Pod) backoffRecord {
	type event struct {
		at     time.Time
		failed bool
	}
	var events []event
	for _, p := range succeeded {
		events = append(events, event{at: finishedAt(p)})
	}
	for _, p := range failed {
		events = append(events, event{at: finishedAt(p), failed: true})
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	for _, e := range events {
		if !e.failed {
			if e.at.After(r.lastFailure) {
				r = backoffRecord{}
			}
			continue
		}
		r.failures++
		if e.at.After(r.lastFailure) {
			r.lastFailure = e.at
		}
	}
	return r
}

func (s *backoffStore) set(uid types.UID, r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[uid] = r
}

func (s *backoffStore) get(uid types.UID) backoffRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.records[uid]
}

func (s *backoffStore) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, uid)
}

// remaining is how long the record still holds back new pods at now.
func (r backoffRecord) remaining(now time.Time) time.Duration {
	if r.failures == 0 {
		return 0
	}
	return max(r.lastFailure.Add(backoffDelay(r.failures)).Sub(now), 0)
}
