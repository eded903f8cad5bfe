package dashboard

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
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
			"their last and next runs. The page updates itself as the hub's objects change.\n\n" +
			"Jobs and schedules of every namespace are shown unless -n/--namespace names one.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("loading kubeconfig: %w", err)
			}
			// Only an explicit -n narrows the page: the kubeconfig context's namespace
			// (usually default) would hide most of the fleet's jobs.
			namespace, explicit, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return fmt.Errorf("loading kubeconfig: %w", err)
			}
			if !explicit {
				namespace = ""
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The informers log through controller-runtime's logger, the server through ctx's.
			logger := zap.New(zap.WriteTo(cmd.ErrOrStderr()), zap.ConsoleEncoder())
			ctrl.SetLogger(logger)
			ctx = logr.NewContext(ctx, logger)
			ln, err := net.Listen("tcp", address)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", address, err)
			}
			defer ln.Close()
			srv, err := Start(ctx, cfg, namespace)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Serving the fleet dashboard at http://%s/ (Ctrl-C stops it)\n", ln.Addr())
			return srv.Serve(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&address, "address", address,
		"host:port to serve on; the default is reachable only from this machine (port 0 picks a free one)")
	return cmd
}
