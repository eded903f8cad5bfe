package app

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func newGetBroadcastJobCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:     "broadcastjob NAME",
		Aliases: []string{"broadcastjobs", "bcj"},
		Short:   "Show a hub BroadcastJob's progress in every cluster",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
			if err != nil {
				return err
			}
			cfg, err := flags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("loading kubeconfig: %w", err)
			}
			c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.Scheme})
			if err != nil {
				return err
			}
			job := &musterv1.BroadcastJob{}
			if err := c.Get(cmd.Context(), clientKey(ns, args[0]), job); err != nil {
				return err
			}
			printBroadcastJob(cmd.OutOrStdout(), job)
			if !follow {
				return nil
			}
			return watchBroadcastJob(cmd.Context(), c, job, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVarP(&follow, "watch", "w", false, "keep printing the table as the job progresses")
	return cmd
}

// watchBroadcastJob prints the table again at every change until the job is deleted or
// ctx ends.
func watchBroadcastJob(ctx context.Context, c client.WithWatch, job *musterv1.BroadcastJob, out io.Writer) error {
	for {
		w, err := c.Watch(ctx, &musterv1.BroadcastJobList{}, client.InNamespace(job.Namespace),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", job.Name)},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: job.ResourceVersion}})
		if err != nil {
			return fmt.Errorf("watching BroadcastJob %s/%s: %w", job.Namespace, job.Name, err)
		}
		for ev := range w.ResultChan() {
			cur, ok := ev.Object.(*musterv1.BroadcastJob)
			switch {
			case ev.Type == watch.Deleted:
				w.Stop()
				fmt.Fprintf(out, "BroadcastJob %s/%s was deleted\n", job.Namespace, job.Name)
				return nil
			case ev.Type == watch.Error:
				// Most likely the version expired: start again from the current object.
				w.Stop()
				if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
					return err
				}
				continue
			case !ok:
				continue
			}
			job = cur
			fmt.Fprintln(out)
			printBroadcastJob(out, job)
		}
		if ctx.Err() != nil {
			return nil
		}
		// The server closes watches now and then; resume from the last version seen.
	}
}

// printBroadcastJob writes the per-cluster table of a BroadcastJob, with fleet totals.
func printBroadcastJob(out io.Writer, job *musterv1.BroadcastJob) {
	s := &job.Status
	fmt.Fprintf(out, "BroadcastJob %s/%s: %s", job.Namespace, job.Name, phaseOrPending(s.Phase))
	for _, t := range []string{musterv1.BroadcastJobFailed, musterv1.BroadcastJobComplete, musterv1.BroadcastJobPaused, musterv1.BroadcastJobNodesEligible} {
		c := meta.FindStatusCondition(s.Conditions, t)
		// NodesEligible is worth a mention when False, the others when True.
		if c == nil || (c.Status == metav1.ConditionTrue) == (t == musterv1.BroadcastJobNodesEligible) {
			continue
		}
		fmt.Fprintf(out, " (%s: %s)", c.Reason, c.Message)
		break
	}
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tPHASE\tDESIRED\tACTIVE\tSUCCEEDED\tFAILED\tPARALLELISM\tPROGRESS")
	for _, c := range s.Clusters {
		row(w, c.ClusterName, c.Phase, c.BroadcastCounts, c.Parallelism)
	}
	row(w, "TOTAL", s.Phase, s.BroadcastCounts, s.Parallelism)
	w.Flush()
}

func row(w io.Writer, name string, phase musterv1.BroadcastJobPhase, c musterv1.BroadcastCounts, parallelism *int32) {
	par := "-"
	if parallelism != nil {
		par = fmt.Sprint(*parallelism)
	}
	progress := "-"
	if c.Desired > 0 {
		progress = fmt.Sprintf("%d%%", 100*(c.Succeeded+c.Failed)/c.Desired)
	}
	fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", name, phaseOrPending(phase), c.Desired, c.Active, c.Succeeded, c.Failed, par, progress)
}

func phaseOrPending(p musterv1.BroadcastJobPhase) string {
	if p == "" {
		return string(musterv1.BroadcastJobPending)
	}
	return string(p)
}
