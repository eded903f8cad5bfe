package worksync

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Marks on a namespace the agent created because a manifest needed it.
const (
	// CreatedNamespaceLabel marks a namespace the agent created.
	CreatedNamespaceLabel = "muster.dev/created-by"
	createdByAgent        = FieldManager
	// CreatedForWorkAnnotation names the Work whose manifest made the agent create the
	// namespace, for people reading it.
	CreatedForWorkAnnotation = "muster.dev/created-for-work"
)

// ensureNamespace creates a missing namespace, marked as the agent's and naming the Work
// that needed it; a namespace that exists is left as it is.
//
// The agent never deletes a namespace, not even one it created: Works of many jobs share a
// namespace, and a deletion decided when one Work goes races with the next Work applying
// there (a terminating namespace refuses new objects, so the next job's shard would fail
// for another job's cleanup). The label lets an operator find and prune them.
func ensureNamespace(ctx context.Context, member client.Client, name, workName string) error {
	var ns corev1.Namespace
	err := member.Get(ctx, types.NamespacedName{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{CreatedNamespaceLabel: createdByAgent},
			Annotations: map[string]string{CreatedForWorkAnnotation: workName},
		}}
		err = member.Create(ctx, &ns)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}
