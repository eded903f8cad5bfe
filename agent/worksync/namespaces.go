package worksync

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/podsecurity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Namespaces are created, read and relabelled through the Executor, never with the
// agent's own rights: the Work executor's ClusterRole (deploy/charts/muster-agent/templates/executor.yaml) grants
// them.

// Marks on a namespace the agent created because a manifest needed it.
const (
	// CreatedNamespaceLabel marks a namespace the agent created.
	CreatedNamespaceLabel = "muster.dev/created-by"
	createdByAgent        = FieldManager
	// CreatedForWorkAnnotation names the Work whose manifest made the agent create the
	// namespace, for people reading it.
	CreatedForWorkAnnotation = "muster.dev/created-for-work"
)

// namespaceSpec is what a Work asks of the namespaces its manifests go to.
type namespaceSpec struct {
	// work names the Work, for the namespaces created for it.
	work string
	// podSecurity are the Pod Security labels of the Work's hub namespace
	// (podsecurity.WorkAnnotation); nil when the Work carries none.
	podSecurity map[string]string
	// refresh says the hub wrote the Work since the agent last applied it: the labels are
	// the hub namespace's current ones, and a namespace the agent created follows them.
	refresh bool
	// err is why the annotation could not be read: the Work's namespaced manifests are
	// not applied, rather than applied into a namespace without the level the hub asked.
	err error
}

func namespaceSpecOf(work *musterv1.Work) namespaceSpec {
	ps, err := podsecurity.MemberLabelsOf(work.Annotations[podsecurity.WorkAnnotation])
	return namespaceSpec{work: work.Name, podSecurity: ps, refresh: work.Generation != work.Status.ObservedGeneration, err: err}
}

// ensureNamespace creates a missing namespace, marked as the agent's, naming the Work that
// needed it and with the Pod Security labels the Work carries, so that the member's own
// admission enforces the hub namespace's level too. A namespace the agent created follows
// the labels of each Work the hub writes; any other namespace is left as it is: its labels
// are the member admin's.
//
// The agent never deletes a namespace, not even one it created: Works of many jobs share a
// namespace, and a deletion decided when one Work goes races with the next Work applying
// there (a terminating namespace refuses new objects, so the next job's shard would fail
// for another job's cleanup). The label lets an operator find and prune them.
func ensureNamespace(ctx context.Context, member client.Client, name string, spec namespaceSpec) error {
	if spec.err != nil {
		return spec.err
	}
	var ns corev1.Namespace
	err := member.Get(ctx, types.NamespacedName{Name: name}, &ns)
	if apierrors.IsNotFound(err) {
		labels := map[string]string{CreatedNamespaceLabel: createdByAgent}
		maps.Copy(labels, spec.podSecurity)
		ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{CreatedForWorkAnnotation: spec.work},
		}}
		err = member.Create(ctx, &ns)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	if !spec.refresh || spec.podSecurity == nil || ns.Labels[CreatedNamespaceLabel] != createdByAgent {
		return nil
	}
	labels, changed := withPodSecurity(ns.Labels, spec.podSecurity)
	if !changed {
		return nil
	}
	orig := ns.DeepCopy()
	ns.Labels = labels
	if err := member.Patch(ctx, &ns, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("namespace %s: updating its Pod Security labels: %w", name, err)
	}
	log.FromContext(ctx).V(2).Info("Updated the Pod Security labels of a namespace the agent created", "namespace", name, "labels", podsecurity.Encode(spec.podSecurity))
	return nil
}

// withPodSecurity returns have with its Pod Security labels replaced by want, and
// whether that changed anything. Other labels stay.
func withPodSecurity(have, want map[string]string) (map[string]string, bool) {
	out := make(map[string]string, len(have)+len(want))
	changed := false
	for k, v := range have {
		if !podsecurity.IsLabel(k) {
			out[k] = v
		} else if w, ok := want[k]; !ok || w != v {
			changed = true
		}
	}
	for k, v := range want {
		if _, ok := have[k]; !ok {
			changed = true
		}
		out[k] = v
	}
	return out, changed
}
