package dashboard

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// NewCommand returns `musterctl dashboard`, which serves the page on localhost until
// interrupted, reading the hub that flags' kubeconfig points at.
func NewCommand(flags genericclioptions.RESTClientGetter) *cobra.Command {
	address := "127.0.0.1:8420"
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a live web page of the fleet's clusters, jobs and schedules",
		Long: "Serve a web page of the fleet as the hub sees it: member clusters (health, nodes, taints),\n" +
			"FleetJobs and BroadcastJobs with their progress in every cluster, and FleetCronJobs with\n" +
			"their last and next runs. The page updates itself as the hub's objects change.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("loading kubeconfig: %w", err)
			}
			ln, err := net.Listen("tcp", address)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", address, err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "Serving the fleet dashboard at http://%s/ (Ctrl-C stops it)\n", ln.Addr())
			return Serve(ctx, cfg, ln)
		},
	}
	cmd.Flags().StringVar(&address, "address", address,
		"host:port to serve on; the default is reachable only from this machine (port 0 picks a free one)")
	return cmd
}
