// Package app builds musterctl's command tree.
package app

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/musterhq/muster/cmd/musterctl/app/dashboard"
)

// version is stamped by the Makefile (-X …/app.version=…); builds without it report the
// module version Go recorded.
var version = ""

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
		newVersionCommand(),
		newInitCommand(flags),
		newTokenCommand(flags),
		newJoinCommand(flags),
		newAcceptCommand(flags),
		newDenyCommand(flags),
		newUnjoinCommand(flags),
		newGetCommand(flags),
		dashboard.NewCommand(flags),
	)
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print musterctl's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "musterctl", Version())
		},
	}
}

// Version is the stamped version, or the module version, or "devel".
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
