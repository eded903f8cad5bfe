package patch

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Helper writes the changes made to an object since it was read.
type Helper struct {
	client   client.Client
	before   client.Object
	shared   bool
	writes   *Writes
	refusals *Refusals
	recorder events.EventRecorder
}

// Option says how the status of the patched kind is written.
type Option func(*Helper)

// SharedStatus guards status writes with the snapshot's resourceVersion: for kinds whose
// status several controllers write.
func SharedStatus() Option { return func(h *Helper) { h.shared = true } }

// Tracked records every status write in w, so the next reconcile can tell whether its
// cache has caught up with it (Writes.Check). For kinds whose status has one writer.
func Tracked(w *Writes) Option { return func(h *Helper) { h.writes = w } }

// Paced holds the object's writes back while r says they wait after a refusal as invalid,
// and records each write's outcome in r, announcing refusals through rec (see Refusals).
func Paced(r *Refusals, rec events.EventRecorder) Option {
	return func(h *Helper) { h.refusals, h.recorder = r, rec }
}

// NewHelper snapshots obj as it was read, before the caller changes it.
func NewHelper(c client.Client, obj client.Object, opts ...Option) *Helper {
	h := &Helper{client: c, before: obj.DeepCopyObject().(client.Object)}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Patch writes what changed in obj since the snapshot: metadata and spec first, under the
// optimistic lock, then status. It writes nothing when nothing changed. obj is left as the
// server returned it, with the changed status. With Paced, it writes nothing while the
// object's writes wait after a refusal, and returns a *RefusedError then.
func (h *Helper) Patch(ctx context.Context, obj client.Object) error {
	if equality.Semantic.DeepEqual(h.before, obj) {
		// Most reconciles change nothing: a typed comparison spares them converting both
		// copies to maps below.
		return nil
	}
	if err := h.refusals.Check(obj); err != nil {
		return fmt.Errorf("writing %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if err := h.write(ctx, obj); err != nil {
		return h.refusals.Observe(ctx, h.recorder, obj, err)
	}
	h.refusals.Forget(obj.GetUID())
	return nil
}

// write makes Patch's writes.
func (h *Helper) write(ctx context.Context, obj client.Object) error {
	before, err := split(h.before)
	if err != nil {
		return err
	}
	after, err := split(obj)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(before.main, after.main) {
		data, err := client.MergeFromWithOptions(&unstructured.Unstructured{Object: before.main}, client.MergeFromWithOptimisticLock{}).
			Data(&unstructured.Unstructured{Object: after.main})
		if err != nil {
			return fmt.Errorf("computing the patch of %s: %w", client.ObjectKeyFromObject(obj), err)
		}
		written := blank(obj)
		if err := h.client.Patch(ctx, written, client.RawPatch(client.Merge.Type(), data)); err != nil {
			return fmt.Errorf("patching %s: %w", client.ObjectKeyFromObject(obj), err)
		}
		set(obj, written)
	}
	if reflect.DeepEqual(before.status, after.status) {
		return nil
	}
	return h.patchStatus(ctx, obj, before.status, after.status)
}

// patchStatus sends the difference between the two statuses and leaves obj as the server
// returned it.
func (h *Helper) patchStatus(ctx context.Context, obj client.Object, before, after map[string]any) error {
	from := &unstructured.Unstructured{Object: map[string]any{"status": before}}
	to := &unstructured.Unstructured{Object: map[string]any{"status": after}}
	var opts []client.MergeFromOption
	if h.shared {
		// The main patch, if any, was made under the lock of the snapshot, so the
		// resourceVersion it returned still stands for the snapshot's status.
		from.SetResourceVersion(obj.GetResourceVersion())
		to.SetResourceVersion(obj.GetResourceVersion())
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	data, err := client.MergeFromWithOptions(from, opts...).Data(to)
	if err != nil {
		return fmt.Errorf("computing the status patch of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	written := blank(obj)
	if err := h.client.Status().Patch(ctx, written, client.RawPatch(client.Merge.Type(), data)); err != nil {
		return fmt.Errorf("patching the status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	h.writes.record(written)
	set(obj, written)
	return nil
}

// blank is an empty object of obj's type and name, for the server's answer to be decoded
// into: decoding into obj itself would keep map keys and pointers the answer leaves out.
func blank(obj client.Object) client.Object {
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	out.SetNamespace(obj.GetNamespace())
	out.SetName(obj.GetName())
	return out
}

// set makes dst a copy of src, both pointers to the same type.
func set(dst, src client.Object) { reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem()) }

// parts is an object split into what the main resource writes and what status writes.
type parts struct {
	main   map[string]any
	status map[string]any
}

func split(obj client.Object) (parts, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return parts{}, fmt.Errorf("converting %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	status, _ := u["status"].(map[string]any)
	delete(u, "status")
	if status == nil {
		status = map[string]any{}
	}
	return parts{main: u, status: status}, nil
}
