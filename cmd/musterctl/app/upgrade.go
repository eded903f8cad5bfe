package app

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

type upgradeOptions struct {
	flags   *genericclioptions.ConfigFlags
	image   string
	wait    bool
	timeout time.Duration
}

func newUpgradeCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade the hub, or this member's agent, in place",
		Long: `Upgrades what init or join installed to this musterctl's manifests and a new image:
the CRDs first, then RBAC, then the Deployment, whose pods roll one at a time. Upgrade the
hub first, then each member's agent: an agent may run the hub's minor version or the one
before, never a newer one (see the README's version skew policy).`,
	}
	cmd.AddCommand(newUpgradeHubCommand(flags), newUpgradeAgentCommand(flags))
	return cmd
}

func (o *upgradeOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.image, "image", o.image, "the new image")
	cmd.Flags().BoolVar(&o.wait, "wait", true, "wait until every pod runs the new image and is ready")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 5*time.Minute, "how long to wait for the rollout")
}

func newUpgradeHubCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	o := &upgradeOptions{flags: flags, image: "muster-hub:" + Version()}
	cmd := &cobra.Command{
		Use:   "hub --image IMAGE",
		Short: "Upgrade the hub in the current cluster: CRDs, RBAC, then a rolling update of its Deployment",
		Long: `Applies this musterctl's CRDs and the hub's RBAC, then rolls the hub Deployment to --image,
keeping the flags it runs with. The two replicas are replaced one at a time; the leader hands
over and the webhook is served throughout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := newClients(o.flags)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			current, err := deployment(ctx, hub, musterv1.HubNamespace, hubDeployment)
			if err != nil {
				return err
			}
			if err := applyHubManifests(ctx, hub, out); err != nil {
				return err
			}
			d, err := hubDeploymentObjects(hubInstall{image: o.image, args: extraHubArgs(current), replicas: ptr.Deref(current.Spec.Replicas, 0)})
			if err != nil {
				return err
			}
			if err := apply(ctx, hub.client, d); err != nil {
				return err
			}
			return o.rollout(ctx, hub, out, musterv1.HubNamespace, hubDeployment)
		},
	}
	o.addFlags(cmd)
	return cmd
}

func newUpgradeAgentCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	o := &upgradeOptions{flags: flags, image: "muster-agent:" + Version()}
	cmd := &cobra.Command{
		Use:   "agent --image IMAGE",
		Short: "Upgrade the agent in the current member cluster: CRDs, RBAC, then its Deployment",
		Long: `Applies this musterctl's member CRDs, the agent's RBAC and the Work executor's, then
rolls the agent Deployment to --image. The agent keeps its identity (its key and hub
certificate are in the member's Secrets), and the new agent picks up its Jobs where the old
one left them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			member, err := newClients(o.flags)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			current, err := deployment(ctx, member, musterv1.AgentNamespace, agentDeployment)
			if err != nil {
				return err
			}
			if err := applyAgentManifests(ctx, member); err != nil {
				return err
			}
			fmt.Fprintln(out, "✓ CRDs, RBAC and the Work executor's roles applied")
			d, err := agentDeploymentObjects(o.image)
			if err != nil {
				return err
			}
			keepReplicas(d, current)
			if err := apply(ctx, member.client, d); err != nil {
				return err
			}
			return o.rollout(ctx, member, out, musterv1.AgentNamespace, agentDeployment)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// agentDeployment is the Deployment `musterctl join` creates.
const agentDeployment = "muster-agent"

// deployment reads the Deployment to upgrade; there is none when the component runs as a
// process (init or join --no-deploy), whose binary is replaced instead.
func deployment(ctx context.Context, c *clients, namespace, name string) (*appsv1.Deployment, error) {
	var d appsv1.Deployment
	err := c.client.Get(ctx, clientKey(namespace, name), &d)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("no Deployment %s/%s here: it runs as a process (--no-deploy), so replace its binary instead", namespace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading Deployment %s/%s: %w", namespace, name, err)
	}
	return &d, nil
}

// hubFixedArgs are the flags the Deployment manifest always sets; the others were added
// with init --hub-arg and are kept across an upgrade.
var hubFixedArgs = []string{"--leader-elect=true"}

func extraHubArgs(d *appsv1.Deployment) []string {
	var extra []string
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != hubContainer {
			continue // a sidecar someone added keeps its own flags
		}
		for _, a := range c.Args {
			if !slices.Contains(hubFixedArgs, a) {
				extra = append(extra, a)
			}
		}
	}
	return extra
}

// hubContainer is the hub's container in its Deployment.
const hubContainer = "hub"

// keepReplicas makes the applied agent Deployment keep the replicas the running one has
// (kubectl scale): an upgrade changes the version, not the size.
func keepReplicas(objs []*unstructured.Unstructured, current *appsv1.Deployment) {
	if current.Spec.Replicas == nil {
		return
	}
	for _, u := range objs {
		if u.GetKind() == "Deployment" {
			_ = unstructured.SetNestedField(u.Object, int64(*current.Spec.Replicas), "spec", "replicas")
		}
	}
}

// rollout waits, unless told not to, until the Deployment's controller has replaced every
// pod with a ready one of the applied template.
func (o *upgradeOptions) rollout(ctx context.Context, c *clients, out io.Writer, namespace, name string) error {
	if !o.wait {
		fmt.Fprintf(out, "✓ Deployment %s/%s updated to %s\n", namespace, name, o.image)
		return nil
	}
	start := time.Now()
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, o.timeout, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := c.client.Get(ctx, clientKey(namespace, name), &d); err != nil {
			last = err.Error()
			return false, nil
		}
		done, state := rolledOut(&d)
		last = state
		return done, nil
	})
	if err != nil {
		return fmt.Errorf("the Deployment %s/%s did not roll out to %s within %s: %s", namespace, name, o.image, o.timeout, last)
	}
	fmt.Fprintf(out, "✓ Deployment %s/%s rolled out to %s in %s\n", namespace, name, o.image, time.Since(start).Round(time.Second))
	return nil
}

// rolledOut reports whether every pod of d runs its current template and is available, as
// kubectl rollout status judges it, and says where the rollout stands.
func rolledOut(d *appsv1.Deployment) (bool, string) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	state := fmt.Sprintf("%d of %d replicas updated, %d available, %d in all", s.UpdatedReplicas, want, s.AvailableReplicas, s.Replicas)
	if s.ObservedGeneration < d.Generation {
		return false, "the Deployment controller has not seen the new template yet"
	}
	return s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want, state
}
