package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func newUnjoinCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	var memberKubeconfig, memberContext string
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER --member-kubeconfig PATH",
		Short: "Remove a cluster from the fleet: revoke it on the hub and uninstall its agent",
		Long: `Deletes the cluster's MemberCluster on the hub, which removes its namespace and RBAC so
its certificate is Forbidden everywhere, then removes the agent, its Secrets and CRDs from
the member.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, name := cmd.Context(), args[0]
			hub, err := newClients(flags)
			if err != nil {
				return err
			}
			memberFlags := genericclioptions.NewConfigFlags(false)
			memberFlags.KubeConfig, memberFlags.Context = &memberKubeconfig, &memberContext
			member, err := newClients(memberFlags)
			if err != nil {
				return fmt.Errorf("member cluster: %w", err)
			}
			// A member whose agent joined under another name is refused before anything
			// changes: a mistyped CLUSTER would otherwise revoke one cluster on the hub, or
			// none, and uninstall another's agent. An unreachable member is not: the hub
			// part still runs, and unjoin fails at the member saying so.
			if joined, err := joinedAs(ctx, member); err == nil && joined != "" && joined != name {
				return fmt.Errorf("the member's agent joined as %q, not %q: nothing changed (unjoin %s with that cluster's kubeconfig)", joined, name, name)
			}
			// A cluster the hub no longer has (an earlier unjoin that failed in the member)
			// still has its agent uninstalled: unjoin can be run again until it succeeds.
			err = setAccepted(ctx, hub, name, false)
			registered := !errors.Is(err, errNotRegistered)
			if err != nil && registered {
				return err
			}
			if err := denyPending(ctx, hub, name); err != nil {
				return err
			}
			if registered {
				mc := &musterv1.MemberCluster{}
				mc.Name = name
				if err := hub.client.Delete(ctx, mc); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("deleting MemberCluster %s: %w", name, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "✓ cluster %s removed from the hub\n", name)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "✓ cluster %s is not on the hub\n", name)
			}
			if err := uninstallAgent(ctx, member); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ agent removed from the member\n")
			return nil
		},
	}
	cmd.Flags().StringVar(&memberKubeconfig, "member-kubeconfig", "", "kubeconfig of the member cluster")
	cmd.Flags().StringVar(&memberContext, "member-context", "", "context in --member-kubeconfig")
	_ = cmd.MarkFlagRequired("member-kubeconfig")
	return cmd
}

// joinedAs is the cluster name in the member's join line (the bootstrap Secret `musterctl
// join` wrote), or "" when the member has none.
func joinedAs(ctx context.Context, member *clients) (string, error) {
	sec, err := member.clientset.CoreV1().Secrets(musterv1.AgentNamespace).Get(ctx, identity.BootstrapSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the member's bootstrap Secret: %w", err)
	}
	return string(sec.Data[identity.KeyClusterName]), nil
}
