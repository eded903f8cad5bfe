package envtest

import (
	"context"
	"errors"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/deploy/charts"
)

// The envtest API server authorizes with RBAC; the Environment's own client is in
// system:masters. These helpers let a test run the agent with exactly the rights
// `musterctl join` gives it.

// agentTemplates are the muster-agent chart's templates that join installs for the
// agent's namespace, identity and its Work executor.
var agentTemplates = []string{"templates/namespace.yaml", "templates/install.yaml", "templates/rbac/role.yaml", "templates/executor.yaml"}

// AgentConfig installs the agent's namespace, ServiceAccounts and RBAC as join does, fills
// the built-in aggregated ClusterRoles (admin, edit, view) as kube-controller-manager
// would, and returns a config that authenticates as the agent's ServiceAccount. A
// controller started with it gets Forbidden for anything its RBAC markers do not grant.
func (e *Environment) AgentConfig(ctx context.Context) (*rest.Config, error) {
	objs, err := charts.Render(charts.Agent, nil)
	if err != nil {
		return nil, err
	}
	for _, u := range objs.From(agentTemplates...) {
		if err := e.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.Unstructured), client.FieldOwner("envtest"), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("%s: applying %s %s: %w", u.Template, u.GetKind(), u.GetName(), err)
		}
	}
	if err := e.AggregateClusterRoles(ctx); err != nil {
		return nil, err
	}
	user, err := e.env.AddUser(crenvtest.User{
		Name:   "system:serviceaccount:" + musterv1.AgentNamespace + ":muster-agent",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + musterv1.AgentNamespace},
	}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding the agent's user: %w", err)
	}
	cfg := user.Config()
	cfg.QPS, cfg.Burst = e.Config.QPS, e.Config.Burst
	return cfg, nil
}

// AggregateClusterRoles does once what kube-controller-manager's clusterrole-aggregation
// controller keeps doing, which envtest does not run: every ClusterRole with an
// aggregation rule gets the rules of the ClusterRoles its selectors match. admin aggregates
// edit, which aggregates view, so it repeats until nothing changes.
func (e *Environment) AggregateClusterRoles(ctx context.Context) error {
	for range 5 {
		changed, err := e.aggregateOnce(ctx)
		if err != nil || !changed {
			return err
		}
	}
	return errors.New("aggregating ClusterRoles did not settle")
}

func (e *Environment) aggregateOnce(ctx context.Context) (bool, error) {
	var roles rbacv1.ClusterRoleList
	if err := e.Client.List(ctx, &roles); err != nil {
		return false, fmt.Errorf("listing ClusterRoles: %w", err)
	}
	changed := false
	for i := range roles.Items {
		role := &roles.Items[i]
		if role.AggregationRule == nil {
			continue
		}
		rules, err := aggregatedRules(role, roles.Items)
		if err != nil {
			return false, err
		}
		if equality.Semantic.DeepEqual(rules, role.Rules) {
			continue
		}
		role.Rules = rules
		if err := e.Client.Update(ctx, role); err != nil {
			return false, fmt.Errorf("aggregating ClusterRole %s: %w", role.Name, err)
		}
		changed = true
	}
	return changed, nil
}

// aggregatedRules is the union, without repeats, of the rules of the roles that role's
// aggregation rule selects, in the order of roles.
func aggregatedRules(role *rbacv1.ClusterRole, roles []rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	for _, sel := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			return nil, fmt.Errorf("ClusterRole %s: %w", role.Name, err)
		}
		for _, other := range roles {
			if other.Name == role.Name || !selector.Matches(labels.Set(other.Labels)) {
				continue
			}
			for _, r := range other.Rules {
				if !containsRule(rules, r) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}

func containsRule(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for _, have := range rules {
		if equality.Semantic.DeepEqual(have, r) {
			return true
		}
	}
	return false
}
