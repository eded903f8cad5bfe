package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestPrintClusters(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	clusters := []musterv1.MemberCluster{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "eu-1", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Minute))},
			Spec:       musterv1.MemberClusterSpec{Accepted: true},
			Status: musterv1.MemberClusterStatus{
				Version:    "v1.36.3",
				Nodes:      &musterv1.NodeCounts{Total: 5, Ready: 4},
				Conditions: []metav1.Condition{{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue}},
			},
		},
		{ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Second))}},
	}
	var out bytes.Buffer
	printClusters(&out, clusters, now)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := [][]string{
		{"NAME", "ACCEPTED", "AVAILABLE", "NODES", "VERSION", "AGE"},
		{"eu-1", "true", "True", "4/5", "v1.36.3", "90m"},
		{"new", "false", "Unknown", "-", "-", "10s"},
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("line %d = %v, want %v", i, got, w)
		}
	}
}

func TestPrintBroadcastJob(t *testing.T) {
	job := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"},
		Status: musterv1.BroadcastJobStatus{
			Phase:           musterv1.BroadcastJobFailedPh,
			BroadcastCounts: musterv1.BroadcastCounts{Desired: 8, Active: 0, Succeeded: 5, Failed: 1},
			Parallelism:     new(int32(3)),
			Conditions: []metav1.Condition{
				{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionTrue, Reason: "NodesEligible", Message: "8 nodes"},
				{Type: musterv1.BroadcastJobFailed, Status: metav1.ConditionTrue, Reason: "PodFailed", Message: "a pod failed in cluster m1"},
			},
			Clusters: []musterv1.ClusterBroadcastStatus{
				{ClusterName: "m1", Phase: musterv1.BroadcastJobFailedPh, Parallelism: new(int32(2)), BroadcastCounts: musterv1.BroadcastCounts{Desired: 4, Succeeded: 2, Failed: 1}},
				{ClusterName: "m2", BroadcastCounts: musterv1.BroadcastCounts{Desired: 4, Succeeded: 3}},
			},
		},
	}
	var out bytes.Buffer
	printBroadcastJob(&out, job)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"BroadcastJob default/probe: Failed (PodFailed: a pod failed in cluster m1)",
		"CLUSTER PHASE DESIRED ACTIVE SUCCEEDED FAILED PARALLELISM PROGRESS",
		"m1 Failed 4 0 2 1 2 75%",
		"m2 Pending 4 0 3 0 - 75%",
		"TOTAL Failed 8 0 5 1 3 75%",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out.String())
	}
	for i, w := range want {
		got := strings.Join(strings.Fields(lines[i]), " ")
		if i == 0 {
			got = lines[i]
		}
		if got != w {
			t.Errorf("line %d = %q, want %q", i, got, w)
		}
	}
}

func TestPrintFleetJob(t *testing.T) {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "render", Namespace: "default"},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided},
			Template:  batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: new(int32(20))}},
		},
		Status: musterv1.FleetJobStatus{
			Phase: musterv1.JobRunning, Active: 3, Succeeded: 12,
			Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "m1", Phase: musterv1.JobComplete, Completions: new(int32(10)), Indexes: &musterv1.IndexRange{Start: 0, End: 10}, Succeeded: 10, CompletedIndexes: "0-9"},
				{ClusterName: "m2", Phase: musterv1.JobRunning, Completions: new(int32(10)), Indexes: &musterv1.IndexRange{Start: 10, End: 20}, Active: 3, Succeeded: 2, CompletedIndexes: "10,11"},
			},
		},
	}
	var out bytes.Buffer
	printFleetJob(&out, fj)
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"FleetJob default/render (Divided): Running",
		"CLUSTER PHASE INDEXES COMPLETIONS ACTIVE SUCCEEDED FAILED COMPLETED-INDEXES",
		"m1 Complete 0-9 10 0 10 0 0-9",
		"m2 Running 10-19 10 3 2 0 10,11",
		"TOTAL Running - 20 3 12 0 -",
	}
	if len(got) != len(want) {
		t.Fatalf("got:\n%s", out.String())
	}
	for i := range want {
		line := strings.Join(strings.Fields(got[i]), " ")
		if i == 0 {
			line = got[i]
		}
		if line != want[i] {
			t.Errorf("line %d = %q, want %q", i, line, want[i])
		}
	}
}

func TestPrintFleetJobNamesSpreadShardsBySubset(t *testing.T) {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "default"},
		Status: musterv1.FleetJobStatus{
			Phase: musterv1.JobRunning, Active: 5,
			Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "m1", Subset: "a", Phase: musterv1.JobRunning, Active: 3},
				{ClusterName: "m2", Subset: "b", Phase: musterv1.JobRunning, Active: 2},
			},
		},
	}
	var out bytes.Buffer
	printFleetJob(&out, fj)
	for _, want := range []string{"a@m1 Running - - 3 0 0 -", "b@m2 Running - - 2 0 0 -"} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			found = found || strings.Join(strings.Fields(line), " ") == want
		}
		if !found {
			t.Errorf("no line %q in:\n%s", want, out.String())
		}
	}
}
