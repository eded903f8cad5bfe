package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func newDescribeCommand(flags *genericclioptions.ConfigFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "describe KIND NAME",
		Short: "Show one fleet object in detail: conditions, each cluster's shard, events",
		Long: `Shows a hub object's spec, its conditions and the hub's events about it. For a FleetJob
or BroadcastJob it adds each cluster's shard: its Work's Applied and Available conditions
(with the member API server's refusal, if any) and the member job's status and conditions
as the agent reported them back. Kinds:
` + musterKinds,
		Example: `  musterctl describe fj render
  musterctl describe bcj prefetch-image -n batch
  musterctl describe cluster eu-1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errNoKind("describe")
			}
			if len(args) != 2 {
				return fmt.Errorf("describe needs a kind and one name: musterctl describe KIND NAME")
			}
			return describe(cmd.Context(), cmd.OutOrStdout(), flags, expandKinds(args[0]), args[1])
		},
	}
}

// describe fetches the object, the Works of its shards and the events about both, and
// prints them.
func describe(ctx context.Context, out io.Writer, flags *genericclioptions.ConfigFlags, kind, name string) error {
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return err
	}
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(kind).WithVersion(""))
	if err != nil {
		return fmt.Errorf("the server doesn't have a resource type %q", kind)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return err
	}
	if gvk.Group != musterv1.GroupVersion.Group {
		return fmt.Errorf("musterctl describes Muster's kinds, not %s; use kubectl describe", gvr.GroupResource())
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	hub, err := newClients(flags)
	if err != nil {
		return err
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		ns = ""
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return err
	}
	o := obj.(client.Object)
	if err := hub.client.Get(ctx, clientKey(ns, name), o); err != nil {
		return err
	}
	in := &describeInput{now: time.Now()}
	if err := in.gather(ctx, hub.client, o); err != nil {
		return err
	}
	return printDescription(out, o, in)
}

// describeInput is what describe prints beside the object itself.
type describeInput struct {
	now    time.Time
	works  []musterv1.Work
	events corev1.EventList
}

// gather reads the Works of a job's shards and the events about the object and them.
func (in *describeInput) gather(ctx context.Context, c client.Client, obj client.Object) error {
	label := ""
	switch obj.(type) {
	case *musterv1.FleetJob:
		label = musterv1.FleetJobUIDLabel
	case *musterv1.BroadcastJob:
		label = musterv1.BroadcastJobUIDLabel
	}
	if label != "" {
		var works musterv1.WorkList
		if err := c.List(ctx, &works, client.MatchingLabels{label: string(obj.GetUID())}); err != nil {
			return fmt.Errorf("listing the shards' Works: %w", err)
		}
		in.works = works.Items
	}
	about := []client.Object{obj}
	for i := range in.works {
		about = append(about, &in.works[i])
	}
	for _, o := range about {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(o.GetNamespace()),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.uid", string(o.GetUID()))}); err != nil {
			return fmt.Errorf("listing events about %s: %w", o.GetName(), err)
		}
		in.events.Items = append(in.events.Items, events.Items...)
	}
	return nil
}
