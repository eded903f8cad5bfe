package podcontrol

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentmetrics "github.com/musterhq/muster/agent/metrics"
)

// Create creates the owner's pods in slow-start batches (see slowStart). It returns how
// many of them exist now, which the caller counts as active, and the first refusal.
func (c Control) Create(ctx context.Context, owner client.Object, pods []*corev1.Pod) (int32, error) {
	key := client.ObjectKeyFromObject(owner)
	created, err := slowStart(len(pods), func(i int) error { return c.create(ctx, key, pods[i]) })
	return int32(created), err
}

// create writes one pod and records it in the owner's expectations.
//
// A pod with a fixed name is expected before the write and the expectation dropped when
// the API server refuses it. An AlreadyExists answer for such a pod is not a refusal:
// the fixed name exists so that a kind gets at most one pod per name, and the pod of that
// name is almost always this controller's own earlier write that the cache does not show
// yet. So it counts as created and stays expected; calling it a failure would report
// FailedCreate and try again on every round until the cache catches up. (Should the name
// belong to a pod the owner does not control, the expectation's TTL bounds the wait and
// the next round tries again.)
//
// A pod whose name the API server generates can only be expected once the write answers
// with the name. That loses nothing: expectations are checked by name against the cache
// at the start of the owner's next reconcile, which never runs while this one does. For
// such a pod AlreadyExists means the server found no free name, so nothing was created:
// a refusal like any other.
func (c Control) create(ctx context.Context, key types.NamespacedName, pod *corev1.Pod) error {
	named := pod.Name != ""
	if named {
		c.Expectations.ExpectCreate(key, pod.Name)
	}
	err := c.Client.Create(ctx, pod)
	switch {
	case err == nil && !named:
		c.Expectations.ExpectCreate(key, pod.Name)
	case named && apierrors.IsAlreadyExists(err):
		// Created before (see above): counted, and still expected.
	case err != nil && named:
		c.Expectations.CreateFailed(key, pod.Name)
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	case err != nil:
		return fmt.Errorf("creating a pod: %w", err)
	}
	agentmetrics.PodsCreated.WithLabelValues(c.Kind).Inc()
	return nil
}
