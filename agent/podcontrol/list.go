package podcontrol

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Adopter holds an owner kind's rules for taking over the pods that match its selector
// but that no controller owns.
type Adopter interface {
	// Adoptable reports whether the owner may take the orphan over.
	Adoptable(orphan *corev1.Pod) bool
	// Adopt makes the owner the orphan's controller. It returns the adopted pod, or nil
	// when the orphan turned out not to be the owner's to take (gone, or taken first).
	Adopt(ctx context.Context, orphan *corev1.Pod) (*corev1.Pod, error)
}

// List returns the owner's pods from the cache: those in its namespace that match
// selector and that it controls. With an Adopter, the orphans that match are offered to
// it, concurrently, and the ones it adopts are returned too.
func (c Control) List(ctx context.Context, owner client.Object, selector labels.Selector, adopter Adopter) ([]*corev1.Pod, error) {
	var list corev1.PodList
	opts := []client.ListOption{client.InNamespace(owner.GetNamespace()), client.MatchingLabelsSelector{Selector: selector}}
	if c.SharedReads {
		opts = append(opts, client.UnsafeDisableDeepCopy)
	}
	if err := c.Client.List(ctx, &list, opts...); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	var orphans []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		switch {
		case metav1.IsControlledBy(p, owner):
			pods = append(pods, p)
		case adopter != nil && !selector.Empty() && metav1.GetControllerOfNoCopy(p) == nil && adopter.Adoptable(p):
			// An empty selector matches every pod of the namespace: adopting on it would
			// take everyone's pods, so it adopts none.
			if c.SharedReads {
				p = p.DeepCopy()
			}
			orphans = append(orphans, p)
		}
	}
	if len(orphans) == 0 {
		return pods, nil
	}
	var mu sync.Mutex
	err := forEach(len(orphans), func(i int) error {
		adopted, err := adopter.Adopt(ctx, orphans[i])
		if err != nil || adopted == nil {
			return err
		}
		mu.Lock()
		pods = append(pods, adopted)
		mu.Unlock()
		return nil
	})
	return pods, err
}
