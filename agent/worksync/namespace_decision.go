package worksync

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Marks on a namespace the agent created because a manifest needed it.
const (
	// CreatedNamespaceLabel marks a namespace the agent created; only such a namespace is
	// ever deleted by the agent. Removing the label keeps the namespace for good.
	CreatedNamespaceLabel = "muster.dev/created-by"
	createdByAgent        = FieldManager
	// CreatedForWorkAnnotation names the Work whose manifest made the agent create the
	// namespace, for people reading it; the decision looks at the live Works instead.
	CreatedForWorkAnnotation = "muster.dev/created-for-work"
)

// namespaceFacts is what the agent knows about a namespace a deleted Work used, once that
// Work's own objects are gone.
type namespaceFacts struct {
	// CreatedByAgent: the namespace carries CreatedNamespaceLabel.
	CreatedByAgent bool
	// Terminating: the namespace is already being deleted.
	Terminating bool
	// NeededBy names the other Works, not being deleted, with a manifest in it.
	NeededBy []string
	// UserObject names an object in it that no Work applied, or "" if there is none.
	UserObject string
}

// releaseNamespace decides whether the agent deletes a namespace a deleted Work used, and
// says why in words for the log. A namespace the agent did not create is never deleted;
// one it created goes when no other Work needs it and nothing of the user lives in it, as
// Karmada and OCM users expect of the objects an agent created on their behalf.
func releaseNamespace(f namespaceFacts) (bool, string) {
	switch {
	case !f.CreatedByAgent:
		return false, "the agent did not create it"
	case f.Terminating:
		return false, "it is already being deleted"
	case len(f.NeededBy) > 0:
		return false, fmt.Sprintf("Works %s still have manifests in it", strings.Join(f.NeededBy, ", "))
	case f.UserObject != "":
		return false, fmt.Sprintf("%s in it was not applied by a Work", f.UserObject)
	}
	return true, "the agent created it and nothing else uses it"
}

// Objects every namespace gets from kube-controller-manager: they are not the user's.
var namespaceDefaults = map[string]string{
	"configmaps":      "kube-root-ca.crt",
	"serviceaccounts": "default",
}

// ignoredResources are kinds whose objects never make a namespace the user's: events only
// record what happened to other objects.
var ignoredResources = map[string]bool{"events": true}

// isUserObject tells whether an object found in a namespace makes it the user's: an
// object no live Work applied that is neither going away, nor a dependent of another
// object (pods of a Job, EndpointSlices of a Service), nor a default every namespace gets.
// An object whose Work label names a Work that no longer exists was orphaned by it, so it
// is the user's now.
func isUserObject(resource string, obj metav1.Object, workExists func(string) bool) bool {
	switch {
	case ignoredResources[resource]:
		return false
	case obj.GetDeletionTimestamp() != nil:
		return false
	case len(obj.GetOwnerReferences()) > 0:
		return false
	case namespaceDefaults[resource] == obj.GetName():
		return false
	}
	work, ok := obj.GetLabels()[WorkLabel]
	return !ok || !workExists(work)
}
