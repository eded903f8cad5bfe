package worksync

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// The agent's only escalation: it may act as the Work executor that `musterctl join`
// installs. A member admin who names another executor grants this for it.
// +kubebuilder:rbac:groups="",namespace=muster-agent,resources=serviceaccounts,verbs=impersonate,resourceNames=muster-work-executor

// DefaultExecutor is the ServiceAccount the agent applies Works as, unless told otherwise.
var DefaultExecutor = types.NamespacedName{Namespace: musterv1.AgentNamespace, Name: musterv1.WorkExecutor}

// ParseExecutor reads a ServiceAccount given as NAMESPACE/NAME.
func ParseExecutor(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok {
		return types.NamespacedName{}, fmt.Errorf("work executor %q: want NAMESPACE/NAME of a ServiceAccount", s)
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("work executor %q: namespace: %s", s, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return types.NamespacedName{}, fmt.Errorf("work executor %q: name: %s", s, strings.Join(errs, "; "))
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// ExecutorUsername is the user name the API server gives a ServiceAccount.
func ExecutorUsername(sa types.NamespacedName) string {
	return "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
}

// NewExecutor is the member as the executor sees it: every request made through it
// impersonates the ServiceAccount sa, so the member's RBAC for sa (not the agent's own
// role) decides what a Work may apply, and what the syncer may read and watch of it. The
// API server adds the ServiceAccount's groups, as for its own token.
func NewExecutor(member *rest.Config, sa types.NamespacedName) (cluster.Cluster, error) {
	cfg := rest.CopyConfig(member)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: ExecutorUsername(sa)}
	c, err := cluster.New(cfg, func(o *cluster.Options) { o.Scheme = scheme.Scheme })
	if err != nil {
		return nil, fmt.Errorf("connecting to the member as work executor %s: %w", sa, err)
	}
	return c, nil
}
