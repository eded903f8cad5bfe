package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// hubWebhookConfiguration names both of the hub's webhook configurations (validating and
// mutating), which the hub registers when it starts.
const hubWebhookConfiguration = "muster-hub"

func newUninstallCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove what init installed in the hub cluster",
	}
	cmd.AddCommand(newUninstallHubCommand(flags))
	return cmd
}

func newUninstallHubCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	timeout := 2 * time.Minute
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Remove the hub from the current cluster, its webhooks first",
		Long: `Removes the hub's webhook configurations first, so that the cluster never refuses writes
to kinds nothing serves any more, then the hub Deployment (waiting until its pods are gone,
and removing the webhooks again in case a stopping replica registered them), its namespace,
RBAC and bootstrap policy. The CRDs and every Muster object stay: a later init serves them
again. Unjoin the members first (musterctl unjoin), or their agents keep trying to reach a
hub that is gone.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := newClients(flags)
			if err != nil {
				return err
			}
			return uninstallHub(cmd.Context(), hub, cmd.OutOrStdout(), timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to wait for the hub's pods to stop")
	return cmd
}

func uninstallHub(ctx context.Context, hub *clients, out io.Writer, timeout time.Duration) error {
	if err := deleteHubWebhooks(ctx, hub.client); err != nil {
		return err
	}
	fmt.Fprintln(out, "✓ webhook configurations removed: writes of Muster objects are no longer sent to the hub")
	objs, err := hubChart(hubInstall{})
	if err != nil {
		return err
	}
	if err := deleteAll(ctx, hub.client, objs.From(deploymentTemplate).Unstructured()); err != nil {
		return err
	}
	if err := waitForNoHubPods(ctx, hub, timeout); err != nil {
		return err
	}
	// A replica that started while the first delete ran registered the webhooks again.
	if err := deleteHubWebhooks(ctx, hub.client); err != nil {
		return err
	}
	fmt.Fprintf(out, "✓ hub Deployment %s/%s removed and its pods gone\n", musterv1.HubNamespace, hubDeployment)
	objs, err = hubChart(hubInstall{})
	if err != nil {
		return err
	}
	// Muster objects stay, and with them their kinds.
	rest := withoutCRDs(objs).Except(deploymentTemplate).Unstructured()
	slices.Reverse(rest) // bindings before what they bind, the namespace last
	if err := deleteAll(ctx, hub.client, rest); err != nil {
		return err
	}
	fmt.Fprintln(out, "✓ namespace muster-system, RBAC and bootstrap policy removed; the CRDs and Muster objects stay")
	return nil
}

func deleteHubWebhooks(ctx context.Context, c client.Client) error {
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: hubWebhookConfiguration}}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: hubWebhookConfiguration}}
	var errs []error
	for _, obj := range []client.Object{validating, mutating} {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting the hub's webhook configuration: %w", err))
		}
	}
	return errors.Join(errs...)
}

// deleteAll deletes objs, those already gone too, and reports every failure.
func deleteAll(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	var errs []error
	for _, u := range objs {
		if err := c.Delete(ctx, u, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", u.GetKind(), u.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

func waitForNoHubPods(ctx context.Context, hub *clients, timeout time.Duration) error {
	var left int
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := hub.client.List(ctx, &pods, client.InNamespace(musterv1.HubNamespace), client.MatchingLabels{"app.kubernetes.io/name": hubDeployment}); err != nil {
			return false, nil
		}
		left = len(pods.Items)
		return left == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%d hub pods still run after %s: %w", left, timeout, err)
	}
	return nil
}
