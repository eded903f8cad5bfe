package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The Work executor is the ServiceAccount the agent applies Works as (the muster-agent
// chart's executor.yaml). Beyond its default roles, `join --work-executor-role NAME` binds
// it the member's ClusterRole NAME with a ClusterRoleBinding muster-work-executor:NAME
// (the chart's workExecutorRoles) labelled executorRoleLabel; the label lets a later join
// and unjoin find them.
const executorRoleLabel = "muster.dev/work-executor-role"

// staleExecutorBindings are the bindings an earlier join made for roles this join does
// not name: a join states the executor's extra roles in full, so naming fewer revokes.
func staleExecutorBindings(existing []rbacv1.ClusterRoleBinding, roles []string) []string {
	var stale []string
	for _, b := range existing {
		if b.Labels[executorRoleLabel] == "true" && !slices.Contains(roles, b.RoleRef.Name) {
			stale = append(stale, b.Name)
		}
	}
	return stale
}

// checkExecutorRoles makes sure every ClusterRole to bind exists: a misspelt name would
// bind nothing, and the Works that need it would stay Forbidden with no hint why.
func checkExecutorRoles(ctx context.Context, c client.Client, roles []string) error {
	var errs []error
	for _, role := range roles {
		if role == "" {
			errs = append(errs, errors.New("--work-executor-role: empty ClusterRole name"))
			continue
		}
		err := c.Get(ctx, clientKey("", role), &rbacv1.ClusterRole{})
		switch {
		case apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("--work-executor-role %s: this cluster has no ClusterRole %s", role, role))
		case err != nil:
			errs = append(errs, fmt.Errorf("--work-executor-role %s: %w", role, err))
		}
	}
	return errors.Join(errs...)
}

// unbindStaleExecutorRoles removes the executor's role bindings an earlier join made for
// roles this one does not name (the chart makes the bindings of the named ones).
func unbindStaleExecutorRoles(ctx context.Context, c client.Client, roles []string) error {
	var existing rbacv1.ClusterRoleBindingList
	if err := c.List(ctx, &existing, client.MatchingLabels{executorRoleLabel: "true"}); err != nil {
		return fmt.Errorf("listing the work executor's role bindings: %w", err)
	}
	for _, name := range staleExecutorBindings(existing.Items, roles) {
		crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Delete(ctx, crb); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the work executor's binding %s: %w", name, err)
		}
	}
	return nil
}

// unbindExecutorRoles removes every extra role binding join made for the executor.
func unbindExecutorRoles(ctx context.Context, c client.Client) error {
	if err := c.DeleteAllOf(ctx, &rbacv1.ClusterRoleBinding{}, client.MatchingLabels{executorRoleLabel: "true"}); err != nil {
		return fmt.Errorf("removing the work executor's role bindings: %w", err)
	}
	return nil
}
