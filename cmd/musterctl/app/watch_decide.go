package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// jobEnd is how far a job got, as far as `get -w --exit-on-finish` cares.
type jobEnd int

const (
	jobRunning jobEnd = iota
	jobComplete
	jobFailed
)

// finishingKinds are the kinds whose objects finish; --exit-on-finish works on these.
var finishingKinds = map[schema.GroupKind]bool{
	{Group: musterv1.GroupVersion.Group, Kind: "FleetJob"}:     true,
	{Group: musterv1.GroupVersion.Group, Kind: "BroadcastJob"}: true,
}

// endOf reads a FleetJob's or BroadcastJob's end from its conditions: Failed=True or
// Complete=True, the same types on both kinds.
func endOf(obj *unstructured.Unstructured) jobEnd {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	end := jobRunning
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["status"] != string(metav1.ConditionTrue) {
			continue
		}
		switch m["type"] {
		case musterv1.FleetJobFailed:
			return jobFailed
		case musterv1.FleetJobComplete:
			end = jobComplete
		}
	}
	return end
}

// watchOutcome decides whether `get -w --exit-on-finish` is done: once every watched job
// has ended, or as soon as one was deleted (it can never end). It fails naming the jobs
// that were deleted, or else that failed.
func watchOutcome(ends map[string]jobEnd, deleted []string) (done bool, err error) {
	if len(deleted) > 0 {
		return true, fmt.Errorf("deleted before it finished: %s", strings.Join(sorted(deleted), ", "))
	}
	var failed []string
	for name, e := range ends {
		switch e {
		case jobRunning:
			return false, nil
		case jobFailed:
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		return true, fmt.Errorf("failed: %s", strings.Join(sorted(failed), ", "))
	}
	return true, nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// rowKey is what a user sees of a table row: a watch prints a row again only when its key
// changed. Columns that only age (type date, shown as "5m") are left out, and so are the
// priority columns unless wide shows them: the status fields behind a hidden column change
// often while the visible row stays the same.
func rowKey(columns []metav1.TableColumnDefinition, row metav1.TableRow, wide bool) string {
	var b strings.Builder
	for i, cell := range row.Cells {
		if i < len(columns) && (columns[i].Type == "date" || columns[i].Priority > 0 && !wide) {
			continue
		}
		fmt.Fprintf(&b, "%v\x00", cell)
	}
	return b.String()
}

// objectKey is what a user sees of an object in yaml, json or a template, without the
// fields every write changes (resourceVersion, managedFields).
func objectKey(obj *unstructured.Unstructured) string {
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	raw, err := json.Marshal(c.Object)
	if err != nil {
		// Unreachable for an object that came from JSON; print it rather than hide it.
		return obj.GetResourceVersion()
	}
	return string(raw)
}
