package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// tableAccept is what kubectl get sends to have the API server render printer columns.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// column is one expected printer column: its name, whether only -o wide shows it, and its
// value for the test object ("" for an empty cell, "*" for any non-empty value).
type column struct {
	name  string
	wide  bool
	value string
}

// tableOf asks the API server for u in the Table form kubectl get prints.
func tableOf(t *testing.T, resource string, u *unstructured.Unstructured) *metav1.Table {
	t.Helper()
	path := "/apis/muster.dev/v1alpha1/"
	if ns := u.GetNamespace(); ns != "" {
		path += "namespaces/" + ns + "/"
	}
	body, err := apiGet(t, path+resource+"/"+u.GetName()+"?includeObject=None", tableAccept)
	if err != nil {
		t.Fatal(err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(body, table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("table has %d rows, want 1", len(table.Rows))
	}
	return table
}

func checkTable(t *testing.T, table *metav1.Table, want []column) {
	t.Helper()
	var got, wantNames []string
	for _, c := range table.ColumnDefinitions {
		got = append(got, fmt.Sprintf("%s/wide=%v", c.Name, c.Priority > 0))
	}
	for _, c := range append([]column{{name: "Name"}}, want...) {
		wantNames = append(wantNames, fmt.Sprintf("%s/wide=%v", c.name, c.wide))
	}
	if !slices.Equal(got, wantNames) {
		t.Fatalf("columns\n got %v\nwant %v", got, wantNames)
	}
	if !slices.ContainsFunc(want, func(c column) bool { return c.wide }) {
		t.Errorf("no column for -o wide")
	}
	for i, c := range want {
		cell := table.Rows[0].Cells[i+1]
		value := ""
		if cell != nil {
			value = fmt.Sprint(cell)
		}
		if value != c.value && (c.value != "*" || value == "") {
			t.Errorf("column %s is %q, want %q", c.name, value, c.value)
		}
	}
}

// createWithStatus creates the sample and then writes status, as the controllers would.
func createWithStatus(t *testing.T, name string, mutate func(u *unstructured.Unstructured), status map[string]any) *unstructured.Unstructured {
	t.Helper()
	ctx := t.Context()
	u := sample(t, name)
	isolate(t, ctx, u)
	if mutate != nil {
		mutate(u)
	}
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	if status != nil {
		u.Object["status"] = status
		if err := env.Client.Status().Update(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func TestPrinterColumns(t *testing.T) {
	condition := func(typ, status, reason string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	cases := []struct {
		resource, sample string
		mutate           func(u *unstructured.Unstructured)
		status           map[string]any
		want             []column
	}{
		{"fleetjobs", "fleetjob", nil, map[string]any{
			"phase": "Running", "active": int64(0), "ready": int64(0), "succeeded": int64(7), "failed": int64(0),
			"progress": "7/20", "clusterCount": int64(2), "startTime": "2026-01-01T00:00:00Z",
		}, []column{
			{"Mode", false, "Divided"}, {"Completions", false, "7/20"}, {"Active", false, "0"}, {"Succeeded", false, "7"},
			{"Failed", false, "0"}, {"Clusters", false, "2"}, {"Phase", false, "Running"}, {"Age", false, "*"},
			{"Ready", true, "0"}, {"Shard Failure", true, "FailFast"}, {"Started", true, "*"},
		}},
		{"broadcastjobs", "broadcastjob", nil, map[string]any{
			"phase": "Running", "desired": int64(5), "active": int64(0), "succeeded": int64(3), "failed": int64(0), "parallelism": int64(2),
		}, []column{
			{"Desired", false, "5"}, {"Active", false, "0"}, {"Succeeded", false, "3"}, {"Failed", false, "0"},
			{"Phase", false, "Running"}, {"Age", false, "*"},
			{"Parallelism", true, "2"}, {"Completion", true, "Always"}, {"Failure", true, "FailFast"}, {"Paused", true, "false"},
		}},
		{"fleetcronjobs", "fleetcronjob", nil, map[string]any{
			"activeCount": int64(0), "lastScheduleTime": "2026-01-01T02:30:00Z", "nextScheduleTime": "2026-01-02T02:30:00Z",
		}, []column{
			{"Schedule", false, "* * * * *"}, {"TimeZone", false, "Europe/Berlin"}, {"Suspend", false, "false"}, {"Active", false, "0"},
			{"Last Schedule", false, "*"}, {"Age", false, "*"},
			{"Next Schedule", true, "2026-01-02T02:30:00Z"}, {"Last Success", true, ""}, {"Concurrency", true, "Forbid"},
		}},
		{"workloadspreads", "workloadspread", nil, map[string]any{
			"replicas": int64(0), "subsetReplicas": "on-prem 0/3, cloud 0",
		}, []column{
			{"Target", false, "crawl-pages"}, {"Strategy", false, "Adaptive"}, {"Replicas", false, "0"},
			{"Subsets", false, "on-prem 0/3, cloud 0"}, {"Age", false, "*"},
			{"Target Kind", true, "FleetJob"}, {"Reschedule After", true, "60"},
		}},
		{"works", "work", func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"muster.dev/cluster": "member1"}) }, map[string]any{
			"conditions": []any{condition("Applied", "False", "ApplyFailed"), condition("Available", "True", "ObjectsExist")},
		}, []column{
			{"Cluster", false, "member1"}, {"Kind", false, "ConfigMap"}, {"Applied", false, "False"}, {"Available", false, "True"},
			{"Age", false, "*"}, {"Object", true, "hello"}, {"Reason", true, "ApplyFailed"},
		}},
		{"memberclusters", "membercluster", func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, "spec", "accepted") }, map[string]any{
			"version": "v1.36.3", "nodes": map[string]any{"total": int64(3), "ready": int64(0), "schedulable": int64(0)},
			"agentVersion": "v0.4.0",
			"conditions": []any{condition("Available", "Unknown", "LeaseExpired"), condition("Joined", "True", "Joined"),
				condition("AgentVersionSupported", "False", "AgentNewerThanHub")},
		}, []column{
			{"Accepted", false, "false"}, {"Available", false, "Unknown"}, {"Ready", false, "0"}, {"Nodes", false, "3"},
			{"Version", false, "v1.36.3"}, {"Age", false, "*"},
			{"Joined", true, "True"}, {"Schedulable", true, "0"}, {"Reason", true, "LeaseExpired"},
			{"Agent", true, "v0.4.0"}, {"Agent-Supported", true, "False"},
		}},
		{"nodeslices", "nodeslice", nil, nil, []column{
			{"Cluster", false, "member1"}, {"Nodes", false, "3"}, {"Age", false, "*"}, {"First Node", true, "member1-node-0"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.resource, func(t *testing.T) {
			u := createWithStatus(t, tc.sample, tc.mutate, tc.status)
			checkTable(t, tableOf(t, tc.resource, u), tc.want)
		})
	}
}

// TestCountersAreWrittenAtZero: the controllers write status with these Go types, and a
// counter dropped at zero (omitempty) prints as an empty column instead of 0.
func TestCountersAreWrittenAtZero(t *testing.T) {
	cases := []struct {
		obj  any
		keys []string
	}{
		{musterv1.FleetJobStatus{}, []string{"active", "ready", "succeeded", "failed", "clusterCount"}},
		{musterv1.BroadcastJobStatus{}, []string{"desired", "active", "succeeded", "failed"}},
		{musterv1.FleetCronJobStatus{}, []string{"activeCount"}},
		{musterv1.WorkloadSpreadStatus{}, []string{"replicas"}},
		{musterv1.NodeSlice{}, []string{"nodeCount"}},
	}
	for _, tc := range cases {
		raw, err := json.Marshal(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(raw, &fields); err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.keys {
			if v, ok := fields[k]; !ok || v != float64(0) {
				t.Errorf("%T: %s is %v in %s, want 0", tc.obj, k, v, raw)
			}
		}
	}
}
