package patch

import (
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ErrStale says the cache shows an object older than this controller's last write to it.
var ErrStale = errors.New("the cache has not caught up with the last status write")

// Writes remembers the resourceVersion of each object's last status write by one
// controller until its cache shows that version. The zero value is ready to use.
type Writes struct {
	mu   sync.Mutex
	last map[types.UID]string
}

// Check returns ErrStale when obj, as read from the cache, is older than the last status
// write this controller made to it: a status computed from it would repeat that write's
// news. Once the cache has caught up, the object is forgotten.
func (w *Writes) Check(obj client.Object) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	written, ok := w.last[obj.GetUID()]
	if !ok {
		return nil
	}
	cmp, err := resourceversion.CompareResourceVersion(obj.GetResourceVersion(), written)
	if err == nil && cmp < 0 {
		return fmt.Errorf("%s at resourceVersion %s, written at %s: %w", client.ObjectKeyFromObject(obj), obj.GetResourceVersion(), written, ErrStale)
	}
	// Caught up, or versions that do not compare (not etcd's): nothing left to wait for.
	delete(w.last, obj.GetUID())
	return nil
}

// Forget drops what is remembered of a deleted object.
func (w *Writes) Forget(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, uid)
}

func (w *Writes) record(obj client.Object) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil {
		w.last = map[types.UID]string{}
	}
	w.last[obj.GetUID()] = obj.GetResourceVersion()
}
