package app

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func newGetCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	get := &cobra.Command{Use: "get", Short: "Show fleet objects"}
	get.AddCommand(&cobra.Command{
		Use:     "clusters",
		Aliases: []string{"cluster", "memberclusters", "mc"},
		Short:   "List member clusters with their health and nodes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hub, err := newClients(flags)
			if err != nil {
				return err
			}
			var list musterv1.MemberClusterList
			if err := hub.client.List(cmd.Context(), &list); err != nil {
				return err
			}
			printClusters(cmd.OutOrStdout(), list.Items, time.Now())
			return nil
		},
	})
	get.AddCommand(newGetBroadcastJobCommand(flags), newGetFleetJobCommand(flags))
	return get
}

// printClusters writes the `musterctl get clusters` table.
func printClusters(out io.Writer, clusters []musterv1.MemberCluster, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NAME\tACCEPTED\tAVAILABLE\tNODES\tVERSION\tAGE")
	for _, mc := range clusters {
		available := "Unknown"
		for _, c := range mc.Status.Conditions {
			if c.Type == musterv1.MemberClusterAvailable {
				available = string(c.Status)
			}
		}
		nodes := "-"
		if n := mc.Status.Nodes; n != nil {
			nodes = fmt.Sprintf("%d/%d", n.Ready, n.Total)
		}
		version := mc.Status.Version
		if version == "" {
			version = "-"
		}
		age := duration.HumanDuration(now.Sub(mc.CreationTimestamp.Time))
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", mc.Name, strconv.FormatBool(mc.Spec.Accepted), available, nodes, version, age)
	}
	w.Flush()
}
