//go:build e2e || badinputprobe

package badinput

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
)

// refusal is what a user reads when the hub refuses an object: the field of their object
// and a stable part of the message about it.
type refusal struct {
	field, message string
}

// refusedCase is an object the hub must refuse at admission. With change set, the object
// itself is valid and stored first, and it is the update change makes that is refused.
type refusedCase struct {
	input  string
	obj    client.Object
	change func(client.Object)
	want   refusal
}

// name says the kind, the input and the outcome, e.g.
// "FleetJob parallelism -1 -> refused on spec.template.spec.parallelism".
func (tc refusedCase) name() string {
	verb := "refused"
	if tc.change != nil {
		verb = "update refused"
	}
	return fmt.Sprintf("%s %s -> %s on %s", kindOf(tc.obj), tc.input, verb, tc.want.field)
}

func kindOf(obj client.Object) string {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	return gvks[0].Kind
}

// refusedCases are every case, kind by kind.
func refusedCases() []refusedCase {
	var all []refusedCase
	for _, cases := range [][]refusedCase{
		fleetJobCases(), broadcastJobCases(), fleetCronJobCases(), workloadSpreadCases(),
		memberClusterCases(), workCases(), nodeSliceCases(),
	} {
		all = append(all, cases...)
	}
	return all
}

// expectRefused creates (or, for an update case, creates and then changes) the case's
// object through c and checks that the API server refused it as Invalid, naming the
// field with the message. An object that was admitted is deleted again.
func expectRefused(t *testing.T, c client.Client, tc refusedCase) {
	t.Helper()
	ctx := t.Context()
	obj := tc.obj.DeepCopyObject().(client.Object)
	if tc.change != nil {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating the valid object to update: %v", err)
		}
		t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
	}
	var err error
	if tc.change != nil {
		// A merge patch carries only the changed field and no resourceVersion: the hub's
		// controllers write the object (finalizer, status) right after it is created, and
		// an Update from the copy read here would then lose on a conflict before admission
		// ever judged the change.
		before := obj.DeepCopyObject().(client.Object)
		tc.change(obj)
		err = c.Patch(ctx, obj, client.MergeFrom(before))
	} else if err = c.Create(ctx, obj); err == nil {
		_ = c.Delete(context.Background(), obj)
	}
	if err == nil {
		t.Fatalf("admitted; want it refused on %s with %q", tc.want.field, tc.want.message)
	}
	msg := err.Error()
	if !apierrors.IsInvalid(err) || !strings.Contains(msg, tc.want.field+": ") || !strings.Contains(msg, tc.want.message) {
		t.Fatalf("refused with\n  %v\nwant Invalid on %s with %q", err, tc.want.field, tc.want.message)
	}
}
