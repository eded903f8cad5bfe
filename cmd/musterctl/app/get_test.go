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
