package envtest

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CountingRecorder passes a controller's events on to Recorder and counts them, by the
// object they regard and their reason, as the controller records them. A test that checks
// an event is announced once reads the count once the controller has observed the state
// that could announce it again, instead of waiting for a repeat to reach the API server.
type CountingRecorder struct {
	events.EventRecorder

	mu     sync.Mutex
	counts map[countKey]int
}

type countKey struct{ namespace, name, reason string }

// NewCountingRecorder counts the events passed on to rec.
func NewCountingRecorder(rec events.EventRecorder) *CountingRecorder {
	return &CountingRecorder{EventRecorder: rec, counts: map[countKey]int{}}
}

// Eventf counts the event, then records it.
func (r *CountingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if o, ok := regarding.(client.Object); ok {
		r.mu.Lock()
		r.counts[countKey{o.GetNamespace(), o.GetName(), reason}]++
		r.mu.Unlock()
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// Count is how many events with reason the controller recorded about the object
// namespace/name.
func (r *CountingRecorder) Count(namespace, name, reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[countKey{namespace, name, reason}]
}
