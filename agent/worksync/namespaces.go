package worksync

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// scanPage is how many objects of one kind one list call reads while looking for the
// user's objects in a namespace; the scan stops at the first one found.
const scanPage = 500

// ensureNamespace creates a missing namespace, marked as the agent's and naming the Work
// that needed it; a namespace that exists is left as it is.
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

// releaseNamespaces deletes the namespaces the agent created for a deleted Work's
// manifests that nothing needs any more (see releaseNamespace). It runs once the Work's
// objects are gone.
func (r *Reconciler) releaseNamespaces(ctx context.Context, hub client.Client, work *musterv1.Work) error {
	names := manifestNamespaces(work)
	if len(names) == 0 {
		return nil
	}
	var works musterv1.WorkList
	if err := hub.List(ctx, &works, client.InNamespace(work.Namespace)); err != nil {
		return fmt.Errorf("listing Works to see who still needs their namespaces: %w", err)
	}
	for _, name := range names {
		if err := r.releaseNamespace(ctx, work, name, works.Items); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) releaseNamespace(ctx context.Context, work *musterv1.Work, name string, works []musterv1.Work) error {
	reader := r.Manager.GetLocalManager().GetAPIReader()
	var ns corev1.Namespace
	if err := reader.Get(ctx, types.NamespacedName{Name: name}, &ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	facts := namespaceFacts{
		CreatedByAgent: ns.Labels[CreatedNamespaceLabel] == createdByAgent,
		Terminating:    ns.DeletionTimestamp != nil,
		NeededBy:       worksNeeding(name, work.Name, works),
	}
	if facts.CreatedByAgent && !facts.Terminating && len(facts.NeededBy) == 0 {
		found, err := r.findUserObject(ctx, name, works)
		switch {
		case discovery.IsGroupDiscoveryFailedError(err):
			// An API group that does not answer (an aggregated API that is down) may hold
			// the user's objects: keep the namespace rather than hold the Work forever.
			facts.UserObject = "an object of an API group that did not answer (" + err.Error() + ")"
		case err != nil:
			return err
		default:
			facts.UserObject = found
		}
	}
	release, why := releaseNamespace(facts)
	log.FromContext(ctx).V(2).Info("namespace of a deleted Work", "namespace", klog.KObj(&ns), "delete", release, "why", why)
	if !release {
		return nil
	}
	// The UID precondition makes sure a namespace recreated meanwhile is not the one deleted.
	err := r.Manager.GetLocalManager().GetClient().Delete(ctx, &ns, client.Preconditions{UID: &ns.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s, created for Works and no longer used: %w", name, err)
	}
	return nil
}

// manifestNamespaces lists, once each, the namespaces a Work's manifests name.
func manifestNamespaces(work *musterv1.Work) []string {
	var out []string
	for _, m := range decodeManifests(work) {
		if m.object == nil || m.object.GetNamespace() == "" || slices.Contains(out, m.object.GetNamespace()) {
			continue
		}
		out = append(out, m.object.GetNamespace())
	}
	return out
}

// worksNeeding names the Works other than self, not being deleted, that have a manifest
// in the namespace.
func worksNeeding(namespace, self string, works []musterv1.Work) []string {
	var out []string
	for i := range works {
		w := &works[i]
		if w.Name == self || w.DeletionTimestamp != nil {
			continue
		}
		if slices.Contains(manifestNamespaces(w), namespace) {
			out = append(out, w.Name)
		}
	}
	return out
}

// findUserObject looks through every kind the member lists in a namespace, as the
// namespace controller does, for an object that makes it the user's; it returns the first
// as "kind name", or "".
func (r *Reconciler) findUserObject(ctx context.Context, namespace string, works []musterv1.Work) (string, error) {
	resources, err := r.namespacedResources()
	if err != nil {
		return "", err
	}
	exists := map[string]bool{}
	for _, w := range works {
		exists[w.Name] = true
	}
	workExists := func(name string) bool { return exists[name] }
	reader := r.Manager.GetLocalManager().GetAPIReader()
	for _, res := range resources {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(res.gvk.GroupVersion().WithKind(res.gvk.Kind + "List"))
		opts := []client.ListOption{client.InNamespace(namespace), client.Limit(scanPage)}
		for {
			if err := reader.List(ctx, list, opts...); err != nil {
				return "", fmt.Errorf("listing %s in namespace %s: %w", res.resource, namespace, err)
			}
			for i := range list.Items {
				if isUserObject(res.resource, &list.Items[i], workExists) {
					return fmt.Sprintf("%s %s", res.gvk.Kind, list.Items[i].Name), nil
				}
			}
			if list.Continue == "" {
				break
			}
			opts = []client.ListOption{client.InNamespace(namespace), client.Limit(scanPage), client.Continue(list.Continue)}
		}
	}
	return "", nil
}

type namespacedResource struct {
	resource string
	gvk      schema.GroupVersionKind
}

// namespacedResources is every namespaced kind the member serves that can be listed, in
// its preferred version. Asked fresh each time: a CRD installed since may hold the user's
// objects, and the question comes up only when a Work that created a namespace goes.
func (r *Reconciler) namespacedResources() ([]namespacedResource, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(r.Manager.GetLocalManager().GetConfig())
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, fmt.Errorf("discovering the member's namespaced kinds: %w", err)
	}
	var out []namespacedResource
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, res := range l.APIResources {
			if ignoredResources[res.Name] || !slices.Contains(res.Verbs, "list") {
				continue
			}
			out = append(out, namespacedResource{resource: res.Name, gvk: gv.WithKind(res.Kind)})
		}
	}
	return out, nil
}
