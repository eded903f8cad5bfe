package envtest

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Rounds records, per object, the newest resourceVersion a controller's round read and
// finished with. A suite hands Done to the reconciler's round hook; a test that changed an
// object waits until Seen reaches the version its change made, and then knows that a round
// has acted on the change: what it would do, it has done.
type Rounds struct {
	mu       sync.Mutex
	versions map[types.NamespacedName]int64
}

// Done records that a round finished with obj as it read it. The API server's
// resourceVersions are etcd revisions, which only grow; one that is not a number is ignored.
func (r *Rounds) Done(obj client.Object) {
	v, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.versions == nil {
		r.versions = map[types.NamespacedName]int64{}
	}
	key := client.ObjectKeyFromObject(obj)
	r.versions[key] = max(r.versions[key], v)
}

// Seen is the newest resourceVersion of key a round finished with, 0 if none.
func (r *Rounds) Seen(key types.NamespacedName) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.versions[key]
}

// WaitPast waits until a round has finished with obj as it is now, or newer: whatever the
// changes up to obj's resourceVersion would make the controller do, it has done.
func (r *Rounds) WaitPast(t *testing.T, obj client.Object) {
	t.Helper()
	want, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q of %s: %v", obj.GetResourceVersion(), client.ObjectKeyFromObject(obj), err)
	}
	key := client.ObjectKeyFromObject(obj)
	Eventually(t, "a round of the controller that saw "+key.String()+" as it is now", func() (bool, string) {
		got := r.Seen(key)
		return got >= want, fmt.Sprintf("seen version %d, want %d", got, want)
	})
}
