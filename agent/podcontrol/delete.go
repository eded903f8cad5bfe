package podcontrol

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentmetrics "github.com/musterhq/muster/agent/metrics"
)

// Delete deletes the owner's pods concurrently, each only while it is the pod that was
// read (a UID precondition spares a pod recreated under its name). With releaseFirst, a
// pod holding that finalizer has it removed before, so that the owner does not count the
// deletion as the pod's failure. A pod already gone counts as deleted. It returns the
// deleted pods, in the order given, and the first error.
func (c Control) Delete(ctx context.Context, owner client.Object, pods []*corev1.Pod, releaseFirst string) ([]*corev1.Pod, error) {
	key := client.ObjectKeyFromObject(owner)
	deleted := make([]bool, len(pods))
	err := forEach(len(pods), func(i int) error {
		p := pods[i]
		if releaseFirst != "" && slices.Contains(p.Finalizers, releaseFirst) {
			if err := c.release(ctx, key, p, releaseFirst); err != nil {
				return err
			}
		}
		if err := c.delete(ctx, key, p); err != nil {
			return err
		}
		deleted[i] = true
		return nil
	})
	var done []*corev1.Pod
	for i, p := range pods {
		if deleted[i] {
			done = append(done, p)
		}
	}
	return done, err
}

// delete expects the pod gone before the write and drops the expectation when the API
// server refuses it: the pod then stays, and the next round should not wait for it.
func (c Control) delete(ctx context.Context, key types.NamespacedName, p *corev1.Pod) error {
	c.Expectations.ExpectDelete(key, p.Name)
	if err := c.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID}); client.IgnoreNotFound(err) != nil {
		c.Expectations.DeleteFailed(key, p.Name)
		return fmt.Errorf("deleting pod %s: %w", p.Name, err)
	}
	agentmetrics.PodsDeleted.WithLabelValues(c.Kind).Inc()
	return nil
}

// Release removes finalizer from the owner's pods concurrently; a pod already gone needs
// no release.
func (c Control) Release(ctx context.Context, owner client.Object, pods []*corev1.Pod, finalizer string) error {
	key := client.ObjectKeyFromObject(owner)
	return forEach(len(pods), func(i int) error { return c.release(ctx, key, pods[i], finalizer) })
}

// release expects the finalizer gone before the write and drops the expectation when the
// API server refuses it. The patch is a strategic-merge delete of the one entry: it
// cannot conflict with other writers of the pod's finalizers, and leaves the cached pod
// as it is.
func (c Control) release(ctx context.Context, key types.NamespacedName, p *corev1.Pod, finalizer string) error {
	c.Expectations.ExpectRelease(key, p.Name, finalizer)
	patch := fmt.Appendf(nil, `{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, finalizer)
	if err := c.Client.Patch(ctx, p.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		c.Expectations.ReleaseFailed(key, p.Name)
		return fmt.Errorf("removing the finalizer %s of pod %s: %w", finalizer, p.Name, err)
	}
	return nil
}
