package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
	kubectlget "k8s.io/kubectl/pkg/cmd/get"
)

type getOptions struct {
	flags         *genericclioptions.ConfigFlags
	print         *kubectlget.PrintFlags
	labelSelector string
	allNamespaces bool
	watch         bool
	exitOnFinish  bool
}

func newGetCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	o := &getOptions{flags: flags, print: kubectlget.NewGetPrintFlags()}
	cmd := &cobra.Command{
		Use:   "get KIND [NAME ...]",
		Short: "List or show fleet objects, as kubectl get does",
		Long: `Lists the objects of a kind on the hub, or shows the named ones. Kinds:
` + musterKinds + `
The default table is the API server's, with the kind's printer columns; -o wide adds the
rest. -w prints the current state, then each row that changed; with --exit-on-finish it
exits once every watched FleetJob or BroadcastJob finished: 0 when all completed, 1 when
any failed. For one job's per-cluster detail use musterctl describe.`,
		Example: `  musterctl get fj                      # FleetJobs in the current namespace
  musterctl get clusters -o wide
  musterctl get bcj -A -l team=ml
  musterctl get fj render -o jsonpath='{.status.phase}'
  musterctl get fj render -w --exit-on-finish`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args)
		},
	}
	o.print.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.labelSelector, "selector", "l", "", "label selector to filter on, e.g. -l key1=value1,key2=value2")
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the objects of every namespace")
	cmd.Flags().BoolVarP(&o.watch, "watch", "w", false, "after printing, keep printing the rows that change")
	cmd.Flags().BoolVar(&o.exitOnFinish, "exit-on-finish", false, "with -w: exit when every watched FleetJob or BroadcastJob finished (1 if any failed)")
	return cmd
}

func (o *getOptions) run(ctx context.Context, out, errOut io.Writer, args []string) error {
	if len(args) == 0 {
		return errNoKind("get")
	}
	if o.exitOnFinish && !o.watch {
		return fmt.Errorf("--exit-on-finish needs -w")
	}
	args = expandArgs(args)
	ns, _, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	if o.watch {
		return o.runWatch(ctx, out, errOut, ns, args)
	}
	r := o.builder(ns, o.sortBy() != "").ResourceTypeOrNameArgs(true, args...).ContinueOnError().Flatten().Do()
	single := false
	r.IntoSingleItemImplied(&single)
	infos, err := r.Infos()
	if printErr := o.printInfos(out, infos, single); printErr != nil {
		return printErr
	}
	if err == nil && countRows(infos) == 0 {
		fmt.Fprintln(errOut, noResourcesMessage(ns, o.allNamespaces))
	}
	return err
}

// human reports whether the output is the API server's table (default or wide).
func (o *getOptions) human() bool {
	f := *o.print.OutputFormat
	return f == "" || f == "wide"
}

// builder is the request for ns (or every namespace) and the label selector, asking for
// the server's Table when the output is human; withObjects puts each row's whole object
// in the Table (watch decides on it).
func (o *getOptions) builder(ns string, withObjects bool) *resource.Builder {
	return resource.NewBuilder(o.flags).Unstructured().
		NamespaceParam(ns).DefaultNamespace().AllNamespaces(o.allNamespaces).
		LabelSelectorParam(o.labelSelector).
		TransformRequests(tableRequest(o.human(), withObjects))
}

// printInfos prints what get found: one table per kind for human output; otherwise the
// one object asked for, or a List of them all.
func (o *getOptions) printInfos(out io.Writer, infos []*resource.Info, single bool) error {
	if len(infos) == 0 {
		return nil
	}
	if !o.human() {
		p, err := o.print.ToPrinter()
		if err != nil {
			return err
		}
		p = o.sorting(p)
		if single && len(infos) == 1 {
			return p.PrintObj(infos[0].Object, out)
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}}}
		for _, info := range infos {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(info.Object)
			if err != nil {
				return err
			}
			list.Items = append(list.Items, unstructured.Unstructured{Object: u})
		}
		return p.PrintObj(list, out)
	}
	kinds := map[schema.GroupKind]bool{}
	for _, info := range infos {
		kinds[info.Mapping.GroupVersionKind.GroupKind()] = true
	}
	var last schema.GroupKind
	var p printers.ResourcePrinter
	for _, info := range infos {
		gk := info.Mapping.GroupVersionKind.GroupKind()
		if p == nil || gk != last {
			if p != nil {
				fmt.Fprintln(out)
			}
			var err error
			if p, err = o.tablePrinter(gk, len(kinds) > 1); err != nil {
				return err
			}
			last = gk
		}
		table, err := decodeTable(info.Object)
		if err != nil {
			return err
		}
		if err := p.PrintObj(table, out); err != nil {
			return err
		}
	}
	return nil
}

// tablePrinter prints server tables of kind gk, naming the kind when several are shown.
func (o *getOptions) tablePrinter(gk schema.GroupKind, withKind bool) (printers.ResourcePrinter, error) {
	flags := o.print.Copy()
	human := *flags.HumanReadableFlags
	flags.HumanReadableFlags = &human
	flags.SetKind(gk)
	if withKind {
		if err := flags.EnsureWithKind(); err != nil {
			return nil, err
		}
	}
	if o.allNamespaces {
		if err := flags.EnsureWithNamespace(); err != nil {
			return nil, err
		}
	}
	p, err := flags.ToPrinter()
	if err != nil {
		return nil, err
	}
	return o.sorting(p), nil
}

func (o *getOptions) sortBy() string { return *o.print.HumanReadableFlags.SortBy }

// sorting wraps p in kubectl's sorting printer when --sort-by asks for an order; tables
// are then requested with whole objects, which the sort field is read from.
func (o *getOptions) sorting(p printers.ResourcePrinter) printers.ResourcePrinter {
	if o.sortBy() == "" {
		return p
	}
	return &kubectlget.SortingPrinter{SortField: o.sortBy(), Delegate: p, Decoder: unstructured.UnstructuredJSONScheme}
}

// countRows counts the objects found: a Table's rows, a list's items, or one.
func countRows(infos []*resource.Info) int {
	n := 0
	for _, info := range infos {
		switch {
		case isTable(info.Object):
			rows, _, _ := unstructured.NestedSlice(info.Object.(*unstructured.Unstructured).Object, "rows")
			n += len(rows)
		case meta.IsListType(info.Object):
			items, _ := meta.ExtractList(info.Object)
			n += len(items)
		default:
			n++
		}
	}
	return n
}

// noResourcesMessage is what kubectl says when a list is empty.
func noResourcesMessage(ns string, all bool) string {
	if all {
		return "No resources found"
	}
	return fmt.Sprintf("No resources found in %s namespace.", ns)
}
