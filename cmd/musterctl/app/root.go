// Package app builds musterctl's command tree.
package app

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/musterhq/muster/cmd/musterctl/app/dashboard"
)

// NewRootCommand returns musterctl's root command.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "musterctl",
		Short:         "Run batch work across a fleet of Kubernetes clusters",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	flags := genericclioptions.NewConfigFlags(true)
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newVersionCommand(flags),
		newInitCommand(flags),
		newUpgradeCommand(flags),
		newUninstallCommand(flags),
		newTokenCommand(flags),
		newJoinCommand(flags),
		newAcceptCommand(flags),
		newDenyCommand(flags),
		newUnjoinCommand(flags),
		newGetCommand(flags),
		dashboard.NewCommand(flags),
		newDescribeCommand(flags),
	)
	return root
}
