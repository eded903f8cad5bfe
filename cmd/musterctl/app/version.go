package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	musterversion "github.com/musterhq/muster/internal/version"
)

// version is stamped by the Makefile (-X …/app.version=…); builds without it report the
// module version Go recorded.
var version = ""

// Version is the stamped version, or what internal/version says (the module version, or
// "devel").
func Version() string {
	if version != "" {
		return version
	}
	return musterversion.Get()
}

// hubDeployment is the Deployment `musterctl init` creates.
const hubDeployment = "muster-hub"

func newVersionCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	clientOnly := false
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print musterctl's version and the hub's",
		Long: `Prints musterctl's version, then the hub's: its API server's Kubernetes version and the
image of the muster-hub Deployment (a hub run as a process, musterctl init --no-deploy, has
none). Fails when the hub cannot be reached, unless --client.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "musterctl: %s\n", Version())
			if clientOnly {
				return nil
			}
			return printHubVersion(cmd.Context(), out, flags)
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print musterctl's version only")
	return cmd
}

func printHubVersion(ctx context.Context, out io.Writer, flags *genericclioptions.ConfigFlags) error {
	hub, err := newClients(flags)
	if err != nil {
		return err
	}
	v, err := hub.clientset.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("reading the hub's version: %w", err)
	}
	fmt.Fprintf(out, "hub API server: %s\n", v.GitVersion)
	var d appsv1.Deployment
	err = hub.client.Get(ctx, clientKey(musterv1.HubNamespace, hubDeployment), &d)
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(out, "hub: no Deployment %s/%s (the hub runs outside the cluster)\n", musterv1.HubNamespace, hubDeployment)
	case err != nil:
		return fmt.Errorf("reading the hub Deployment: %w", err)
	default:
		for _, c := range d.Spec.Template.Spec.Containers {
			fmt.Fprintf(out, "hub: %s\n", c.Image)
		}
	}
	return nil
}
