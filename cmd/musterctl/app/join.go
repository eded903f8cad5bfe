package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/cmd/musterctl/app/bootstrap"
	"github.com/musterhq/muster/deploy"
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

// install puts the agent's CRDs, namespace, RBAC, bootstrap Secret and Deployment into
// the member.
func (o *joinOptions) install(ctx context.Context, member *clients, hub *bootstrap.Hub) error {
	if err := applyAgentManifests(ctx, member); err != nil {
		return err
	}
	if err := bindExecutorRoles(ctx, member.client, o.executorRoles); err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: musterv1.AgentNamespace, Name: identity.BootstrapSecret},
		Data: map[string][]byte{
			identity.KeyHubURL: []byte(hub.URL), identity.KeyCA: hub.CA,
			identity.KeyToken: []byte(o.token), identity.KeyClusterName: []byte(o.clusterName),
		},
	}
	secrets := member.clientset.CoreV1().Secrets(musterv1.AgentNamespace)
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("writing the bootstrap Secret: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("writing the bootstrap Secret: %w", err)
	}
	if o.noDeploy {
		return nil
	}
	deployment, err := agentDeploymentObjects(o.image)
	if err != nil {
		return err
	}
	return apply(ctx, member.client, deployment)
}

// uninstallAgent removes everything join installs in a member.
func uninstallAgent(ctx context.Context, member *clients) error {
	objs, err := agentManifests()
	if err != nil {
		return err
	}
	crds, err := readManifests(deploy.CRDs, agentCRDs, nil)
	if err != nil {
		return err
	}
	return errors.Join(unbindExecutorRoles(ctx, member.client), deleteAll(ctx, member.client, append(objs, crds...)))
}

// applyAgentManifests applies the member's CRDs (waiting until they serve), the agent's
// namespace and RBAC and the Work executor: what join installs and upgrade updates before
// the Deployment.
func applyAgentManifests(ctx context.Context, member *clients) error {
	if err := installCRDs(ctx, member, agentCRDs); err != nil {
		return err
	}
	objs, err := agentManifests()
	if err != nil {
		return err
	}
	return apply(ctx, member.client, objs)
}

// agentDeploymentObjects is the agent Deployment with image.
func agentDeploymentObjects(image string) ([]*unstructured.Unstructured, error) {
	return readManifests(deploy.Agent, "agent/deployment.yaml", map[string]string{"Image": image})
}

// agentCRDs are the CRDs a member needs: member-local BroadcastJobs run there.
const agentCRDs = "crd/muster.dev_broadcastjobs.yaml"

// agentManifests are the agent's namespace, identity and member-side RBAC, and the Work
// executor with its default roles.
func agentManifests() ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, f := range []string{"agent/install.yaml", "agent/rbac/role.yaml", "agent/executor.yaml"} {
		more, err := readManifests(deploy.Agent, f, nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, more...)
	}
	return objs, nil
}
