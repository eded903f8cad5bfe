package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"
)

// runWatch lists the kind's objects (the named ones only, when names are given) and
// follows them: each object is printed when it first shows and again whenever what the
// output shows of it changed.
func (o *getOptions) runWatch(ctx context.Context, out, errOut io.Writer, ns string, args []string) error {
	kind, names := args[0], args[1:]
	if strings.ContainsAny(kind, ",/") {
		return fmt.Errorf("-w watches one kind: musterctl get KIND [NAME ...] -w")
	}
	w := &watcher{opts: o, out: out, names: names, shown: map[types.UID]string{}, ends: map[string]jobEnd{}}
	for first := true; ; first = false {
		r := o.builder(ns, o.exitOnFinish).ResourceTypeOrNameArgs(true, kind).SingleResourceType().Do()
		infos, err := r.Infos()
		if err != nil {
			return err
		}
		if len(infos) != 1 {
			return fmt.Errorf("-w watches one kind, and %q named %d lists", kind, len(infos))
		}
		if first {
			if err := w.start(infos[0]); err != nil {
				return err
			}
		}
		rv, err := w.list(infos[0].Object, first)
		if err != nil {
			return err
		}
		if first && len(w.shown) == 0 {
			fmt.Fprintln(errOut, noResourcesMessage(ns, o.allNamespaces))
		}
		if done, err := w.outcome(); done {
			return err
		}
		events, err := r.Watch(rv)
		if err != nil {
			return fmt.Errorf("watching %s: %w", kind, err)
		}
		done, err := w.follow(ctx, events)
		events.Stop()
		if done || ctx.Err() != nil {
			return err
		}
		// The server ended the watch (timeout, or our version expired): list again, which
		// prints only what changed meanwhile.
	}
}

// watcher prints the rows that change and tracks the ends of watched jobs.
type watcher struct {
	opts  *getOptions
	out   io.Writer
	names []string
	gk    schema.GroupKind
	// resource is the plural name, for NotFound errors.
	resource schema.GroupResource
	printer  printers.ResourcePrinter
	// columns are the server table's, which watch events may leave out.
	columns []metav1.TableColumnDefinition
	// shown is the key of what was last printed of each object.
	shown   map[types.UID]string
	ends    map[string]jobEnd
	deleted []string
}

func (w *watcher) start(info *resource.Info) error {
	w.gk = info.Mapping.GroupVersionKind.GroupKind()
	w.resource = info.Mapping.Resource.GroupResource()
	if w.opts.exitOnFinish && !finishingKinds[w.gk] {
		return fmt.Errorf("--exit-on-finish works with fleetjobs and broadcastjobs, not %s", w.resource)
	}
	var err error
	if w.opts.human() {
		w.printer, err = w.opts.tablePrinter(w.gk, false)
	} else {
		w.printer, err = w.opts.print.ToPrinter()
	}
	return err
}

// entry is one object of a list or watch event: its metadata (or whole object) and, in
// a table, its row.
type entry struct {
	obj *unstructured.Unstructured
	row *metav1.TableRow
}

// list handles a full listing: it prints the changed entries as one table and returns
// the list's resource version to watch from. On the first listing every named object
// must be there.
func (w *watcher) list(obj runtime.Object, first bool) (string, error) {
	entries, rv, err := w.entries(obj)
	if err != nil {
		return "", err
	}
	if first {
		if err := w.requireNames(entries); err != nil {
			return "", err
		}
	}
	return rv, w.print(entries, false)
}

func (w *watcher) requireNames(entries []entry) error {
	for _, name := range w.names {
		found := false
		for _, e := range entries {
			found = found || e.obj.GetName() == name
		}
		if !found {
			return apierrors.NewNotFound(w.resource, name)
		}
	}
	return nil
}

// follow prints the watch's events until it ends (done false) or the outcome is decided.
func (w *watcher) follow(ctx context.Context, events watch.Interface) (done bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case ev, ok := <-events.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Error:
				if status := apierrors.FromObject(ev.Object); apierrors.IsGone(status) || apierrors.IsResourceExpired(status) {
					return false, nil
				}
				return true, apierrors.FromObject(ev.Object)
			case watch.Bookmark:
				continue
			}
			entries, _, err := w.entries(ev.Object)
			if err != nil {
				return true, err
			}
			if err := w.print(entries, ev.Type == watch.Deleted); err != nil {
				return true, err
			}
			if done, err := w.outcome(); done {
				return true, err
			}
		}
	}
}

// entries splits a table (or a list, or one object) into the watched entries.
func (w *watcher) entries(obj runtime.Object) (out []entry, rv string, err error) {
	if !w.opts.human() {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			return w.keep(nil, entry{obj: o}), o.GetResourceVersion(), nil
		case *unstructured.UnstructuredList:
			for i := range o.Items {
				out = w.keep(out, entry{obj: &o.Items[i]})
			}
			return out, o.GetResourceVersion(), nil
		default:
			return nil, "", fmt.Errorf("unexpected %T from the server", obj)
		}
	}
	table, err := decodeTable(obj)
	if err != nil {
		return nil, "", err
	}
	if len(table.ColumnDefinitions) > 0 {
		w.columns = table.ColumnDefinitions
	}
	rv = table.ResourceVersion
	for i := range table.Rows {
		u, ok := table.Rows[i].Object.Object.(*unstructured.Unstructured)
		if !ok {
			return nil, "", fmt.Errorf("the server's table row has no object metadata")
		}
		out = w.keep(out, entry{obj: u, row: &table.Rows[i]})
		rv = u.GetResourceVersion()
	}
	return out, rv, nil
}

// keep appends e when it is one of the watched objects.
func (w *watcher) keep(out []entry, e entry) []entry {
	if len(w.names) == 0 {
		return append(out, e)
	}
	for _, n := range w.names {
		if e.obj.GetName() == n {
			return append(out, e)
		}
	}
	return out
}

// print prints the entries whose shown key changed, records job ends and deletions.
func (w *watcher) print(entries []entry, deleted bool) error {
	table := &metav1.Table{ColumnDefinitions: w.columns}
	for _, e := range entries {
		name := e.obj.GetNamespace() + "/" + e.obj.GetName()
		if w.opts.exitOnFinish {
			w.ends[name] = endOf(e.obj)
			if deleted && w.ends[name] == jobRunning {
				w.deleted = append(w.deleted, name)
			}
		}
		key := objectKey(e.obj)
		if e.row != nil {
			key = rowKey(w.columns, *e.row, *w.opts.print.OutputFormat == "wide")
		}
		if w.shown[e.obj.GetUID()] == key {
			continue
		}
		w.shown[e.obj.GetUID()] = key
		if deleted {
			delete(w.shown, e.obj.GetUID())
		}
		if e.row == nil {
			if err := w.printer.PrintObj(e.obj, w.out); err != nil {
				return err
			}
			continue
		}
		table.Rows = append(table.Rows, *e.row)
	}
	if len(table.Rows) == 0 {
		return nil
	}
	return w.printer.PrintObj(table, w.out)
}

func (w *watcher) outcome() (bool, error) {
	if !w.opts.exitOnFinish {
		return false, nil
	}
	return watchOutcome(w.ends, w.deleted)
}
