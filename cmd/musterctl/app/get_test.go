package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
