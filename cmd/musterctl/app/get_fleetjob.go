package app

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func newGetFleetJobCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	var watching bool
	cmd := &cobra.Command{
		Use:     "fleetjob NAME",
		Aliases: []string{"fleetjobs", "fj"},
		Short:   "Show a FleetJob's shards in every cluster",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, flags, args[0], watching, &musterv1.FleetJob{}, &musterv1.FleetJobList{}, func(out io.Writer, o client.Object) {
				printFleetJob(out, o.(*musterv1.FleetJob))
			})
		},
	}
	cmd.Flags().BoolVarP(&watching, "watch", "w", false, "keep printing the table as the job progresses")
	return cmd
}

// printFleetJob writes the per-cluster table of a FleetJob, with fleet totals.
func printFleetJob(out io.Writer, fj *musterv1.FleetJob) {
	s := &fj.Status
	fmt.Fprintf(out, "FleetJob %s/%s (%s): %s", fj.Namespace, fj.Name, fj.Spec.Placement.Mode, orPending(string(s.Phase)))
	for _, t := range []string{musterv1.FleetJobFailed, musterv1.FleetJobComplete, musterv1.FleetJobScheduled} {
		if c := meta.FindStatusCondition(s.Conditions, t); c != nil && (c.Status == "True") == (t != musterv1.FleetJobScheduled) {
			fmt.Fprintf(out, " (%s: %s)", c.Reason, c.Message)
			break
		}
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tPHASE\tINDEXES\tCOMPLETIONS\tACTIVE\tSUCCEEDED\tFAILED\tCOMPLETED-INDEXES")
	for _, c := range s.Clusters {
		indexes := "-"
		if r := c.Indexes; r != nil {
			indexes = fmt.Sprintf("%d-%d", r.Start, r.End-1)
		}
		cluster := c.ClusterName
		if c.Subset != "" {
			// A WorkloadSpread's shard: one per subset and cluster.
			cluster = c.Subset + "@" + c.ClusterName
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", cluster, orPending(string(c.Phase)), indexes, count(c.Completions), c.Active, c.Succeeded, c.Failed, orDash(c.CompletedIndexes))
	}
	fmt.Fprintf(w, "TOTAL\t%s\t-\t%s\t%d\t%d\t%d\t-\n", orPending(string(s.Phase)), count(fj.Spec.Template.Spec.Completions), s.Active, s.Succeeded, s.Failed)
	w.Flush()
}

func count(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(ptr.Deref(p, 0))
}

func orPending(s string) string {
	if s == "" {
		return "Pending"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
