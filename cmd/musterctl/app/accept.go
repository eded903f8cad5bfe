package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/binding"
)

func newAcceptCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	wait := 30 * time.Second
	rekey := false
	maxLifetime := identity.DefaultMaxCertificateLifetime
	cmd := &cobra.Command{
		Use:   "accept CLUSTER...",
		Short: "Accept clusters into the fleet and approve their agents' certificates",
		Long: `Accepts each cluster and approves its agent's pending certificate request. A cluster's
identity is bound to the key of its first approved join: a later request with another key
is shown and refused unless --rekey says the administrator means to replace a lost key.

A cluster accepted again after musterctl deny gets nothing until its agent joins again:
run musterctl token create --cluster NAME on the hub, the join line it prints in the
member, then musterctl accept NAME. The agent keeps its key, so no --rekey is needed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: forEachCluster(flags, func(ctx context.Context, out io.Writer, hub *clients, name string) error {
			return accept(ctx, out, hub, name, wait, identity.Facts{Rekey: rekey, MaxLifetime: maxLifetime})
		}),
	}
	cmd.Flags().DurationVar(&wait, "wait", wait, "how long to wait for the cluster to register and its agent to ask for a certificate")
	cmd.Flags().BoolVar(&rekey, "rekey", false, "replace the cluster's bound agent key with the key of its one pending join (after the old key was lost)")
	cmd.Flags().DurationVar(&maxLifetime, "max-certificate-lifetime", maxLifetime, "longest agent certificate to approve; keep it at most the hub's --max-agent-certificate-lifetime")
	return cmd
}

// accept marks the cluster accepted and approves its agent's pending certificate
// requests, waiting for one if the agent has not asked yet. policy carries --rekey and
// the lifetime limit.
func accept(ctx context.Context, out io.Writer, hub *clients, name string, timeout time.Duration, policy identity.Facts) error {
	// The agent registers its cluster moments after it starts; accepting right after a
	// join waits for it instead of failing. The timeout bounds how long the polls keep
	// asking, not each request: a request cut short by the poll's deadline fails with an
	// error that is neither NotFound nor a timeout (the client's rate limiter refuses to
	// start one it cannot finish), so the requests run under ctx.
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		err := setAccepted(ctx, hub, name, true)
		if errors.Is(err, errNotRegistered) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		if wait.Interrupted(err) {
			return fmt.Errorf("no cluster named %s registered with this hub within %s (run musterctl join in it and start its agent)", name, timeout)
		}
		return err
	}
	approved := 0
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		n, pending, err := approvePending(ctx, out, hub, name, policy)
		approved += n
		if apierrors.IsConflict(err) {
			// The hub's approver (or the agent) wrote the MemberCluster meanwhile: read it
			// again on the next pass.
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return approved > 0 || (!pending && joined(ctx, hub, name)), nil
	})
	if err != nil && approved == 0 && !joined(ctx, hub, name) {
		if !wait.Interrupted(err) {
			// The agent did ask, and its requests could not be decided (several keys,
			// say): that error says what to do, the timeout's advice would mislead.
			return err
		}
		return fmt.Errorf("cluster %s is accepted, but its agent has not asked for a certificate within %s: is muster-agent running in it? "+
			"After musterctl deny, its agent must join again: musterctl token create --cluster %s, then the join line in the member (%w)", name, timeout, name, err)
	}
	fmt.Fprintf(out, "✓ cluster %s accepted (%d certificate request(s) approved)\n", name, approved)
	return nil
}

// approvePending approves every undecided CSR of the cluster that the policy allows an
// administrator to approve, and denies, showing them, those asking for the identity with
// a key it is not bound to; pending says whether any is still undecided.
func approvePending(ctx context.Context, out io.Writer, hub *clients, cluster string, policy identity.Facts) (approved int, pending bool, err error) {
	csrs, err := clusterCSRs(ctx, hub, cluster)
	if err != nil {
		return 0, false, err
	}
	var mc musterv1.MemberCluster
	if err := hub.client.Get(ctx, clientKey("", cluster), &mc); err != nil {
		return 0, false, fmt.Errorf("reading MemberCluster %s: %w", cluster, err)
	}
	if policy.Rekey || mc.Annotations[identity.AgentKeyAnnotation] == "" {
		// Binding (or rebinding) the identity is meant for one agent: with several candidate
		// keys the administrator could not tell which is theirs, so nothing is approved.
		if keys := joinKeys(csrs); len(keys) > 1 {
			return 0, false, fmt.Errorf("cluster %s has %d pending joins with different keys %v; deny the ones that are not its agent's (kubectl certificate deny) and retry", cluster, len(keys), keys)
		}
	}
	for i := range csrs {
		csr := &csrs[i]
		facts := policy
		facts.Accepted, facts.ByAdmin = true, true
		facts.BoundKey, facts.JoinID = mc.Annotations[identity.AgentKeyAnnotation], mc.Annotations[identity.AgentJoinAnnotation]
		v := identity.Decide(csr, facts)
		switch v.Decision {
		case identity.Approve:
			if err := binding.Bind(ctx, hub.client, &mc, csr); err != nil {
				return approved, true, err
			}
			csr.Status.Conditions = append(csr.Status.Conditions, identity.ApprovalCondition(musterv1.CSRReasonAcceptedByMusterctl, v.Why))
			if _, err := hub.clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
				return approved, true, fmt.Errorf("approving %s: %w", csr.Name, err)
			}
			key, _ := identity.RequestKey(csr)
			fmt.Fprintf(out, "  approved %s (requested by %s, key %s)\n", csr.Name, csr.Spec.Username, key)
			approved++
		case identity.Deny:
			csr.Status.Conditions = append(csr.Status.Conditions, identity.DenialCondition(v.Reason, v.Why))
			_, err := hub.clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
			// The hub's approver may have denied it a moment earlier.
			if err != nil && !apierrors.IsConflict(err) {
				return approved, true, fmt.Errorf("denying %s: %w", csr.Name, err)
			}
			fmt.Fprintf(out, "  refused %s (requested by %s): %s\n", csr.Name, csr.Spec.Username, v.Why)
		case identity.Wait:
			pending = true
		}
	}
	return approved, pending, nil
}

// joinKeys are the distinct keys of the undecided bootstrap requests among csrs.
func joinKeys(csrs []certificatesv1.CertificateSigningRequest) []string {
	var keys []string
	for i := range csrs {
		csr := &csrs[i]
		req, err := identity.ParseAgentCSR(csr)
		if err != nil || len(csr.Status.Conditions) > 0 || identity.RequesterOf(csr, req.Cluster) != identity.RequesterBootstrap {
			continue
		}
		if !slices.Contains(keys, req.Key) {
			keys = append(keys, req.Key)
		}
	}
	return keys
}

// joined says whether the cluster's agent has a current join: one approved since the
// cluster was last accepted (a deny forgets it).
func joined(ctx context.Context, hub *clients, name string) bool {
	var mc musterv1.MemberCluster
	if err := hub.client.Get(ctx, clientKey("", name), &mc); err != nil {
		return false
	}
	return mc.Annotations[identity.AgentJoinAnnotation] != ""
}

// errNotRegistered: no MemberCluster of that name exists.
var errNotRegistered = errors.New("no cluster of that name has registered with this hub")

func setAccepted(ctx context.Context, hub *clients, name string, accepted bool) error {
	// A deny forgets the agent's join in the same write, and so does an accept of a
	// denied cluster: its old certificates must not regain access (see
	// identity.AcceptCluster). The lock keeps a join recorded meanwhile from being lost;
	// a conflict (the agent reporting status, say) reads the cluster again.
	// RetryOnConflict returns nil when a try fails with a context error (it takes it for
	// the end of its own backoff), so the last try's error is what is returned.
	var last error
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		last = acceptOrDeny(ctx, hub, name, accepted)
		return last
	}); err != nil {
		return err
	}
	return last
}

// acceptOrDeny writes the cluster's acceptance once, under its resource version.
func acceptOrDeny(ctx context.Context, hub *clients, name string, accepted bool) error {
	var mc musterv1.MemberCluster
	if err := hub.client.Get(ctx, clientKey("", name), &mc); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("%w: %s", errNotRegistered, name)
		}
		return err
	}
	patch := client.MergeFromWithOptions(mc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if accepted {
		identity.AcceptCluster(&mc)
	} else {
		identity.DenyCluster(&mc)
	}
	return hub.client.Patch(ctx, &mc, patch)
}

// forEachCluster runs fn on the hub for every cluster named on the command line.
func forEachCluster(flags *genericclioptions.ConfigFlags, fn func(ctx context.Context, out io.Writer, hub *clients, name string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		hub, err := newClients(flags)
		if err != nil {
			return err
		}
		for _, name := range args {
			if err := fn(cmd.Context(), cmd.OutOrStdout(), hub, name); err != nil {
				return err
			}
		}
		return nil
	}
}

// clusterCSRs lists the certificate requests made for a cluster's agent.
func clusterCSRs(ctx context.Context, hub *clients, cluster string) ([]certificatesv1.CertificateSigningRequest, error) {
	var csrs certificatesv1.CertificateSigningRequestList
	if err := hub.client.List(ctx, &csrs, client.MatchingLabels{musterv1.ClusterNameLabel: cluster}); err != nil {
		return nil, fmt.Errorf("listing certificate requests of %s: %w", cluster, err)
	}
	// The label is the requester's to set: a request whose subject names another cluster
	// is not this one's, whatever it is labelled, and must not block or join its decisions.
	return slices.DeleteFunc(csrs.Items, func(csr certificatesv1.CertificateSigningRequest) bool {
		req, err := identity.ParseAgentCSR(&csr)
		return err == nil && req.Cluster != cluster
	}), nil
}

func newDenyCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "deny CLUSTER...",
		Short: "Revoke clusters' acceptance: their agents' certificates stop working on the hub",
		Args:  cobra.MinimumNArgs(1),
		RunE: forEachCluster(flags, func(ctx context.Context, out io.Writer, hub *clients, name string) error {
			if err := setAccepted(ctx, hub, name, false); err != nil {
				return err
			}
			if err := denyPending(ctx, hub, name); err != nil {
				return err
			}
			fmt.Fprintf(out, "✓ cluster %s denied\n", name)
			return nil
		}),
	}
}

// denyPending denies the cluster's undecided certificate requests.
func denyPending(ctx context.Context, hub *clients, cluster string) error {
	csrs, err := clusterCSRs(ctx, hub, cluster)
	if err != nil {
		return err
	}
	for i := range csrs {
		csr := &csrs[i]
		if len(csr.Status.Conditions) > 0 {
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, identity.DenialCondition(musterv1.CSRReasonDeniedByMusterctl, "the cluster was denied"))
		if _, err := hub.clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("denying %s: %w", csr.Name, err)
		}
	}
	return nil
}
