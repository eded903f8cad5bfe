package app

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
)

type initOptions struct {
	flags    *genericclioptions.ConfigFlags
	noDeploy bool
	image    string
	hubArgs  []string
	tokenTTL time.Duration
	dryRun   bool
	output   string
}

func newInitCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	o := &initOptions{flags: flags, image: "muster-hub:" + Version(), tokenTTL: bootstrap.DefaultTokenTTL}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Install Muster's hub into the current cluster and print the join command",
		Long: `Installs the CRDs, the muster-system namespace, the hub's RBAC, the bootstrap policy, the
agents' heartbeat priority level (API Priority and Fairness) and (unless --no-deploy) the
hub Deployment, then creates a bootstrap token and prints the
musterctl join command that members run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), cmd) },
	}
	cmd.Flags().BoolVar(&o.noDeploy, "no-deploy", o.noDeploy, "install everything but the hub Deployment (run muster-hub as a process instead)")
	cmd.Flags().StringVar(&o.image, "image", o.image, "image of the hub Deployment")
	cmd.Flags().StringArrayVar(&o.hubArgs, "hub-arg", nil, "a flag for muster-hub in the Deployment, as --hub-arg=--webhook-cert-validity=2160h (repeat for more)")
	cmd.Flags().DurationVar(&o.tokenTTL, "token-ttl", o.tokenTTL, "lifetime of the bootstrap token")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print every object init would apply, in order, and change nothing: no cluster is contacted; the bootstrap token and kube-public/cluster-info (when missing), which init makes in the cluster, are not printed")
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "with --dry-run, how to print the objects: yaml or json")
	return cmd
}

func (o *initOptions) run(ctx context.Context, cmd *cobra.Command) error {
	if o.dryRun {
		objs, err := hubObjects(hubInstall{image: o.image, args: o.hubArgs}, !o.noDeploy)
		if err != nil {
			return err
		}
		return printObjects(cmd.OutOrStdout(), objs, o.output)
	}
	// An expired token would print a join command that can only fail.
	if o.tokenTTL <= 0 {
		return fmt.Errorf("--token-ttl %s: a token must live for some time", o.tokenTTL)
	}
	hub, err := newClients(o.flags)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if err := applyHubManifests(ctx, hub, out); err != nil {
		return err
	}
	if err := ensureClusterInfo(ctx, hub); err != nil {
		return err
	}
	if !o.noDeploy {
		if err := applyHubDeployment(ctx, hub, hubInstall{image: o.image, args: o.hubArgs}); err != nil {
			return err
		}
		fmt.Fprintf(out, "✓ hub Deployment %s/%s (%s) created\n", musterv1.HubNamespace, hubDeployment, o.image)
	}
	join, err := issueToken(ctx, hub, o.tokenTTL, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nMuster's hub is installed. Join a member cluster by running, with its kubeconfig:\n\n  %s\n\n", join)
	return nil
}

// hubObjects are what init applies, in order: the CRDs, the hub's namespace, RBAC and
// bootstrap policy, and (withDeployment) the Deployment h describes, its Service and
// PodDisruptionBudget.
func hubObjects(h hubInstall, withDeployment bool) ([]*unstructured.Unstructured, error) {
	objs, err := hubChart(h)
	if err != nil {
		return nil, err
	}
	if !withDeployment {
		objs = objs.Except(deploymentTemplate)
	}
	return applyOrder(objs, deploymentTemplate), nil
}

// hubDeploymentObjects are the hub Deployment h describes, its Service and
// PodDisruptionBudget.
func hubDeploymentObjects(h hubInstall) ([]*unstructured.Unstructured, error) {
	objs, err := hubChart(h)
	if err != nil {
		return nil, err
	}
	return objs.From(deploymentTemplate).Unstructured(), nil
}

// applyHubManifests applies the CRDs (waiting until they serve), the hub's namespace,
// RBAC and bootstrap policy: what init installs and upgrade updates before the Deployment.
func applyHubManifests(ctx context.Context, hub *clients, out io.Writer) error {
	objs, err := hubChart(hubInstall{})
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, hub, crdsOf(objs)); err != nil {
		return err
	}
	fmt.Fprintln(out, "✓ CRDs installed")
	if err := apply(ctx, hub.client, withoutCRDs(objs).Except(deploymentTemplate).Unstructured()); err != nil {
		return err
	}
	fmt.Fprintln(out, "✓ namespace muster-system, RBAC and bootstrap policy installed")
	return nil
}

// applyHubDeployment applies the hub Deployment h describes.
func applyHubDeployment(ctx context.Context, hub *clients, h hubInstall) error {
	deployment, err := hubDeploymentObjects(h)
	if err != nil {
		return err
	}
	return apply(ctx, hub.client, deployment)
}

// installCRDs applies crds and waits until they serve.
func installCRDs(ctx context.Context, c *clients, crds []*unstructured.Unstructured) error {
	if err := apply(ctx, c.client, crds); err != nil {
		return err
	}
	for _, u := range crds {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.client.Get(ctx, clientKey("", u.GetName()), &crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s did not become established: %w", u.GetName(), err)
		}
	}
	return nil
}

// ensureClusterInfo publishes the hub's address and CA in kube-public/cluster-info unless
// the cluster already does (kubeadm-made clusters).
func ensureClusterInfo(ctx context.Context, hub *clients) error {
	ca, err := caData(hub.config)
	if err != nil {
		return err
	}
	cm, err := bootstrap.ClusterInfo(hub.config.Host, ca)
	if err != nil {
		return err
	}
	err = hub.client.Create(ctx, cm)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("publishing kube-public/cluster-info: %w", err)
	}
	return nil
}

// issueToken creates a bootstrap token and returns the join command for it.
// A token with a cluster may join only that cluster.
func issueToken(ctx context.Context, hub *clients, ttl time.Duration, cluster string) (string, error) {
	token, err := bootstrap.NewToken()
	if err != nil {
		return "", err
	}
	if _, err := hub.clientset.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, bootstrap.TokenSecret(token, ttl, time.Now(), cluster), metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("creating the bootstrap token: %w", err)
	}
	var cm corev1.ConfigMap
	if err := hub.client.Get(ctx, clientKey(metav1.NamespacePublic, bootstrapapi.ConfigMapClusterInfo), &cm); err != nil {
		return "", fmt.Errorf("reading kube-public/cluster-info: %w", err)
	}
	cfg, err := clientcmd.Load([]byte(cm.Data[bootstrapapi.KubeConfigKey]))
	if err != nil {
		return "", fmt.Errorf("kube-public/cluster-info: %w", err)
	}
	for _, c := range cfg.Clusters {
		certs, err := bootstrap.ParseCA(c.CertificateAuthorityData)
		if err != nil {
			return "", fmt.Errorf("kube-public/cluster-info: %w", err)
		}
		return bootstrap.JoinCommand(c.Server, token, bootstrap.CAHash(certs[0]), cluster), nil
	}
	return "", fmt.Errorf("kube-public/cluster-info names no cluster")
}

func caData(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile == "" {
		return nil, fmt.Errorf("the kubeconfig has no certificate authority for %s", cfg.Host)
	}
	return os.ReadFile(cfg.CAFile)
}
