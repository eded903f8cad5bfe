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
	var watching bool
	cmd := &cobra.Command{
		Use:     "broadcastjob NAME",
		Aliases: []string{"broadcastjobs", "bcj"},
		Short:   "Show a hub BroadcastJob's progress in every cluster",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return show(cmd, flags, args[0], watching, &musterv1.BroadcastJob{}, &musterv1.BroadcastJobList{}, func(out io.Writer, o client.Object) {
				printBroadcastJob(out, o.(*musterv1.BroadcastJob))
			})
		},
	}
	cmd.Flags().BoolVarP(&watching, "watch", "w", false, "keep printing the table as the job progresses")
	return cmd
}

// show prints the named object of the hub with print and, when watching, again at every
// change.
func show(cmd *cobra.Command, flags *genericclioptions.ConfigFlags, name string, watching bool, obj client.Object, list client.ObjectList, print func(io.Writer, client.Object)) error {
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
	if err := c.Get(cmd.Context(), clientKey(ns, name), obj); err != nil {
		return err
	}
	print(cmd.OutOrStdout(), obj)
	if !watching {
		return nil
	}
	return follow(cmd.Context(), c, obj, list, cmd.OutOrStdout(), print)
}

// follow prints obj again, with print, at every change until it is deleted or ctx ends.
// list is an empty list of obj's kind, to watch with.
func follow(ctx context.Context, c client.WithWatch, obj client.Object, list client.ObjectList, out io.Writer, print func(io.Writer, client.Object)) error {
	for {
		w, err := c.Watch(ctx, list, client.InNamespace(obj.GetNamespace()),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", obj.GetName())},
			&client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: obj.GetResourceVersion()}})
		if err != nil {
			return fmt.Errorf("watching %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Deleted:
				w.Stop()
				fmt.Fprintf(out, "%s/%s was deleted\n", obj.GetNamespace(), obj.GetName())
				return nil
			case watch.Error:
				// Most likely the version expired: start again from the current object.
				w.Stop()
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					return err
				}
				continue
			}
			cur, ok := ev.Object.(client.Object)
			if !ok {
				continue
			}
			obj = cur
			fmt.Fprintln(out)
			print(out, obj)
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
