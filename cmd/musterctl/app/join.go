package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/deploy/charts"
	"github.com/musterhq/muster/internal/bootstrap"
	"github.com/musterhq/muster/internal/memberid"
)

var clusterNamePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// maxClusterName is the longest cluster name: its hub namespace, muster-member-<name>,
// must be a DNS label (the MemberCluster CRD refuses longer names).
const maxClusterName = 49

// checkClusterName refuses, for flag, a name no MemberCluster can have.
func checkClusterName(flag, name string) error {
	if len(name) > maxClusterName || !clusterNamePattern.MatchString(name) {
		return fmt.Errorf("%s %q must be a DNS label of at most %d characters", flag, name, maxClusterName)
	}
	return nil
}

type joinOptions struct {
	flags       *genericclioptions.ConfigFlags
	hubURL      string
	token       string
	caHash      string
	clusterName string
	noDeploy    bool
	image       string
	timeout     time.Duration
	// executorRoles are the member's ClusterRoles bound to the Work executor beyond its
	// defaults.
	executorRoles []string
	dryRun        bool
	output        string
}

func newJoinCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	o := &joinOptions{flags: flags, image: "muster-agent:" + Version(), timeout: 10 * time.Second}
	cmd := &cobra.Command{
		Use:   "join --hub-apiserver URL --hub-token TOKEN --hub-ca-hash sha256:HASH --cluster-name NAME",
		Short: "Join the current cluster to a Muster hub",
		Long: `Checks the hub's identity against --hub-ca-hash and the token, then installs the agent's
CRDs, the muster-agent namespace, the bootstrap Secret and (unless --no-deploy) the agent
Deployment. Nothing is installed when a check fails. The hub administrator then runs
musterctl accept NAME.

The agent applies Works as the ServiceAccount muster-agent/muster-work-executor, which may
manage namespaced objects (the built-in admin ClusterRole), namespaces and member
BroadcastJobs. A Work with anything cluster-scoped beyond that is refused by this cluster
(Applied=False, Forbidden) unless you bind the executor more with --work-executor-role:
each join binds exactly the roles it names and unbinds the ones an earlier join named.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd) },
	}
	cmd.Flags().StringVar(&o.hubURL, "hub-apiserver", "", "URL of the hub's API server")
	cmd.Flags().StringVar(&o.token, "hub-token", "", "bootstrap token from musterctl init or musterctl token create")
	cmd.Flags().StringVar(&o.caHash, "hub-ca-hash", "", "sha256:<hex> pin of the hub's CA public key")
	cmd.Flags().StringVar(&o.clusterName, "cluster-name", "", "name of this cluster in the fleet")
	cmd.Flags().BoolVar(&o.noDeploy, "no-deploy", o.noDeploy, "install everything but the agent Deployment (run muster-agent as a process instead)")
	cmd.Flags().StringVar(&o.image, "image", o.image, "image of the agent Deployment")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "how long to wait for the hub to answer, and for it to sign a token just created")
	cmd.Flags().StringArrayVar(&o.executorRoles, "work-executor-role", nil,
		"a ClusterRole of this cluster to bind to the Work executor, letting Works apply what it allows (repeatable; e.g. cluster-admin trusts the hub with everything)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "verify the hub as join does, then print every object join would apply to this cluster, in order, and change nothing: this cluster is not contacted, so its checks (name taken, roles present) are not made")
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "with --dry-run, how to print the objects: yaml or json")
	for _, f := range []string{"hub-apiserver", "hub-token", "hub-ca-hash", "cluster-name"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}

func (o *joinOptions) run(ctx context.Context, cmd *cobra.Command) error {
	if err := checkClusterName("--cluster-name", o.clusterName); err != nil {
		return err
	}
	token, err := bootstrap.ParseToken(o.token)
	if err != nil {
		return fmt.Errorf("--hub-token: %w", err)
	}
	hub, err := bootstrap.Discover(ctx, o.hubURL, token, o.caHash, o.timeout)
	if err != nil {
		return err
	}
	if o.dryRun {
		objs, err := o.objects(hub)
		if err != nil {
			return err
		}
		return printObjects(cmd.OutOrStdout(), objs, o.output)
	}
	member, err := newClients(o.flags)
	if err != nil {
		return err
	}
	id, err := memberid.ClusterID(ctx, member.clientset)
	if err != nil {
		return err
	}
	if err := o.checkName(ctx, hub, token, id); err != nil {
		return err
	}
	if err := checkExecutorRoles(ctx, member.client, o.executorRoles); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "✓ hub %s verified (CA %s)\n", hub.URL, o.caHash)
	if err := o.install(ctx, member, hub); err != nil {
		return errors.Join(err, uninstallAgent(context.WithoutCancel(ctx), member))
	}
	fmt.Fprintf(out, "✓ agent installed in namespace %s\n\nOn the hub, accept the cluster:\n\n  musterctl accept %s\n\n", musterv1.AgentNamespace, o.clusterName)
	if o.noDeploy {
		fmt.Fprintf(out, "Then start the agent against this cluster:\n\n  muster-agent --kubeconfig <this cluster's kubeconfig>\n\n")
	}
	return nil
}

// checkName makes sure the bootstrap token is accepted by the hub and the name is free,
// or already this cluster's (a re-join). A dry-run create asks both without reading any
// MemberCluster, which a token may not; only a token bound to the name (musterctl token
// create --cluster) may read that one cluster, to see whether it is this one.
func (o *joinOptions) checkName(ctx context.Context, hub *bootstrap.Hub, token bootstrap.Token, clusterID string) error {
	c, err := client.New(&rest.Config{Host: hub.URL, BearerToken: token.String(), TLSClientConfig: rest.TLSClientConfig{CAData: hub.CA}, Timeout: o.timeout},
		client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	mc := musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: o.clusterName, Annotations: map[string]string{identity.ClusterIDAnnotation: clusterID}}}
	err = c.Create(ctx, &mc, client.DryRunAll)
	switch {
	case err == nil:
		return nil
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the hub rejected bootstrap token %s: it is expired or deleted", token.ID)
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		return fmt.Errorf("bootstrap token %s may not register cluster %s: %w", token.ID, o.clusterName, err)
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("asking the hub about cluster %s: %w", o.clusterName, err)
	}
	err = c.Get(ctx, clientKey("", o.clusterName), &mc)
	if apierrors.IsForbidden(err) {
		return fmt.Errorf("the hub already has a cluster named %s, and this token may not read it: if this cluster is %s joining again, "+
			"use a token bound to it (musterctl token create --cluster %s); otherwise choose another --cluster-name", o.clusterName, o.clusterName, o.clusterName)
	}
	if err != nil {
		return fmt.Errorf("asking the hub about cluster %s: %w", o.clusterName, err)
	}
	if got := mc.Annotations[identity.ClusterIDAnnotation]; got != clusterID {
		return fmt.Errorf("the hub already has a cluster named %s, and it is not this cluster (its cluster ID is %q, this one's %q): choose another --cluster-name", o.clusterName, got, clusterID)
	}
	return nil
}

// joinLine is the muster-agent chart's join line for a hub verified by discovery.
func (o *joinOptions) joinLine(hub *bootstrap.Hub) agentJoin {
	return agentJoin{
		hubURL: hub.URL, ca: string(hub.CA), caHash: o.caHash, token: o.token,
		clusterName: o.clusterName, executorRoles: o.executorRoles,
	}
}

// objects are what join applies, in order: the member's CRDs, the agent's namespace,
// RBAC and Work executor, the bootstrap Secret and (unless --no-deploy) the Deployment.
func (o *joinOptions) objects(hub *bootstrap.Hub) ([]*unstructured.Unstructured, error) {
	objs, err := agentChart(o.image, o.joinLine(hub))
	if err != nil {
		return nil, err
	}
	if o.noDeploy {
		objs = objs.Except(deploymentTemplate)
	}
	return applyOrder(objs, bootstrapTemplate, deploymentTemplate), nil
}

// install puts the agent's CRDs, namespace, RBAC, bootstrap Secret and Deployment into
// the member, and unbinds the executor's roles an earlier join bound and this one does
// not name.
func (o *joinOptions) install(ctx context.Context, member *clients, hub *bootstrap.Hub) error {
	objs, err := agentChart(o.image, o.joinLine(hub))
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, member, crdsOf(objs)); err != nil {
		return err
	}
	if err := apply(ctx, member.client, withoutCRDs(objs).Except(bootstrapTemplate, deploymentTemplate).Unstructured()); err != nil {
		return err
	}
	if err := unbindStaleExecutorRoles(ctx, member.client, o.executorRoles); err != nil {
		return err
	}
	if err := apply(ctx, member.client, objs.From(bootstrapTemplate).Unstructured()); err != nil {
		return fmt.Errorf("writing the bootstrap Secret: %w", err)
	}
	if o.noDeploy {
		return nil
	}
	return apply(ctx, member.client, objs.From(deploymentTemplate).Unstructured())
}

// uninstallAgent removes everything join installs in a member.
func uninstallAgent(ctx context.Context, member *clients) error {
	objs, err := agentChart("", agentJoin{})
	if err != nil {
		return err
	}
	// The CRDs go last: the agent's namespace and bindings first.
	return errors.Join(unbindExecutorRoles(ctx, member.client), deleteAll(ctx, member.client, applyOrderReversedCRDsLast(objs)))
}

// applyOrderReversedCRDsLast is objs in the order to delete them: what binds before what
// it binds, the namespace after what is in it, the CRDs last.
func applyOrderReversedCRDsLast(objs charts.Objects) []*unstructured.Unstructured {
	rest := withoutCRDs(objs).Unstructured()
	slices.Reverse(rest)
	return append(rest, crdsOf(objs)...)
}

// applyAgentManifests applies the member's CRDs (waiting until they serve), the agent's
// namespace and RBAC and the Work executor: what upgrade updates before the Deployment.
// The executor's extra role bindings, which only a join names, are left as they are.
func applyAgentManifests(ctx context.Context, member *clients) error {
	objs, err := agentChart("", agentJoin{})
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, member, crdsOf(objs)); err != nil {
		return err
	}
	return apply(ctx, member.client, withoutCRDs(objs).Except(deploymentTemplate).Unstructured())
}

// agentDeploymentObjects is the agent Deployment with image.
func agentDeploymentObjects(image string) ([]*unstructured.Unstructured, error) {
	objs, err := agentChart(image, agentJoin{})
	if err != nil {
		return nil, err
	}
	return objs.From(deploymentTemplate).Unstructured(), nil
}
