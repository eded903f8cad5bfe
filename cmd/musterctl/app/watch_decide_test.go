package app

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestEndOf(t *testing.T) {
	cond := func(typ, status string) any { return map[string]any{"type": typ, "status": status} }
	cases := []struct {
		name  string
		conds []any
		want  jobEnd
	}{
		{"no status", nil, jobRunning},
		{"other conditions", []any{cond("Scheduled", "True"), cond("ShardsApplied", "True")}, jobRunning},
		{"complete", []any{cond("Complete", "True")}, jobComplete},
		{"complete false", []any{cond("Complete", "False")}, jobRunning},
		{"failed", []any{cond("Failed", "True")}, jobFailed},
		{"failed wins over complete", []any{cond("Complete", "True"), cond("Failed", "True")}, jobFailed},
		{"malformed entry", []any{"Complete"}, jobRunning},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			if c.conds != nil {
				u.Object["status"] = map[string]any{"conditions": c.conds}
			}
			if got := endOf(u); got != c.want {
				t.Errorf("endOf = %v, want %v", got, c.want)
			}
		})
	}
}

func TestWatchOutcome(t *testing.T) {
	cases := []struct {
		name    string
		ends    map[string]jobEnd
		deleted []string
		done    bool
		err     string
	}{
		{"nothing watched", map[string]jobEnd{}, nil, true, ""},
		{"one running", map[string]jobEnd{"a": jobComplete, "b": jobRunning}, nil, false, ""},
		{"a failure waits for the rest", map[string]jobEnd{"a": jobFailed, "b": jobRunning}, nil, false, ""},
		{"all complete", map[string]jobEnd{"a": jobComplete, "b": jobComplete}, nil, true, ""},
		{"some failed", map[string]jobEnd{"b": jobFailed, "a": jobFailed, "c": jobComplete}, nil, true, "failed: a, b"},
		{"deleted while running", map[string]jobEnd{"a": jobRunning}, []string{"a"}, true, "deleted before it finished: a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done, err := watchOutcome(c.ends, c.deleted)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if done != c.done || got != c.err {
				t.Errorf("watchOutcome = %t, %q; want %t, %q", done, got, c.done, c.err)
			}
		})
	}
}

func TestRowKeyIgnoresAgesAndHiddenColumns(t *testing.T) {
	cols := []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Phase", Type: "string"}, {Name: "Age", Type: "date"}, {Name: "Ready", Type: "integer", Priority: 1}}
	row := func(cells ...any) metav1.TableRow { return metav1.TableRow{Cells: cells} }
	if rowKey(cols, row("a", "Running", "5s", 0), false) != rowKey(cols, row("a", "Running", "7m", 0), false) {
		t.Error("an older age alone changed the key")
	}
	if rowKey(cols, row("a", "Running", "5s", 0), false) == rowKey(cols, row("a", "Complete", "5s", 0), false) {
		t.Error("a new phase did not change the key")
	}
	if rowKey(cols, row("a", int64(1), "5s", 0), false) == rowKey(cols, row("a", int64(2), "5s", 0), false) {
		t.Error("a new count did not change the key")
	}
	if rowKey(cols, row("a", "Running", "5s", 1), false) != rowKey(cols, row("a", "Running", "5s", 2), false) {
		t.Error("a column only -o wide shows changed the key of the default table")
	}
	if rowKey(cols, row("a", "Running", "5s", 1), true) == rowKey(cols, row("a", "Running", "5s", 2), true) {
		t.Error("a wide column's change did not change the key of -o wide")
	}
}

func TestObjectKeyIgnoresBookkeeping(t *testing.T) {
	obj := func(rv string, phase string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "a", "resourceVersion": rv, "managedFields": []any{map[string]any{"time": rv}}},
			"status":   map[string]any{"phase": phase},
		}}
	}
	if objectKey(obj("1", "Running")) != objectKey(obj("2", "Running")) {
		t.Error("a new resourceVersion alone changed the key")
	}
	if objectKey(obj("1", "Running")) == objectKey(obj("2", "Complete")) {
		t.Error("a new phase did not change the key")
	}
}
