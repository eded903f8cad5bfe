package webhook

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// DefaultReservedNamespaces are the hub namespaces no FleetJob, BroadcastJob, FleetCronJob
// or WorkloadSpread may live in. A Muster object runs in the namespace of the same name on
// every member, so one in these would reach the members' system namespaces, the agent's
// own (and its ServiceAccount), or the hub's envelopes. An entry ending in * is a prefix.
var DefaultReservedNamespaces = []string{
	"kube-system", "kube-public", "kube-node-lease",
	musterv1.HubNamespace, musterv1.AgentNamespace, musterv1.MemberNamespacePrefix + "*",
}

// reservedBy returns the entry of reserved that namespace matches: the same name, or a
// prefix written with a trailing *; "" when none does.
func reservedBy(namespace string, reserved []string) string {
	i := slices.IndexFunc(reserved, func(r string) bool {
		if prefix, ok := strings.CutSuffix(r, "*"); ok {
			return strings.HasPrefix(namespace, prefix)
		}
		return namespace == r
	})
	if i < 0 {
		return ""
	}
	return reserved[i]
}

// namespaceErrors refuses an object in a reserved namespace, on metadata.namespace.
func namespaceErrors(namespace string, reserved []string) field.ErrorList {
	entry := reservedBy(namespace, reserved)
	if entry == "" {
		return nil
	}
	detail := fmt.Sprintf("namespace %s is reserved", namespace)
	if entry != namespace {
		detail = fmt.Sprintf("namespace %s is reserved (%s)", namespace, entry)
	}
	return field.ErrorList{field.Forbidden(field.NewPath("metadata", "namespace"),
		detail+": Muster would run this object in the namespace of the same name on every member, which belongs to the system or to Muster itself; use another namespace")}
}
