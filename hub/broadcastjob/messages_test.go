package broadcastjob

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

func TestMessages(t *testing.T) {
	many := make([]*cluster, 10000)
	for i := range many {
		many[i] = &cluster{name: fmt.Sprintf("m%05d", i)}
	}
	for _, tc := range []struct{ name, got, want string }{
		{"one cluster", clusterNames(many[:1]), "cluster m00000"},
		{"two clusters", clusterNames(many[:2]), "clusters m00000 and m00001"},
		{"ten thousand clusters", clusterNames(many), "clusters m00000, m00001, m00002, m00003, m00004, m00005, m00006, m00007, m00008, m00009 and 9990 more"},
		{"excluded", noEligibleClusters(map[string]int{clusters.SelectorMismatch: 2}),
			"no member cluster matches the placement; 2 clusters excluded: 2 do not match the cluster selector"},
		{"no members", noEligibleClusters(nil), "no member cluster matches the placement; the fleet has no member clusters"},
		{"one node", nodesEligibleMessage(1, 1), "1 node is eligible in 1 cluster"},
		{"nodes", nodesEligibleMessage(5, 2), "5 nodes are eligible in 2 clusters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("\n got %q\nwant %q", tc.got, tc.want)
			}
			if strings.Contains(tc.got, "map[") {
				t.Errorf("%q prints a Go map", tc.got)
			}
		})
	}
}

func TestNewlyWithoutClusters(t *testing.T) {
	status := func(reason string) *musterv1.BroadcastJobStatus {
		s := &musterv1.BroadcastJobStatus{}
		if reason != "" {
			s.Conditions = []metav1.Condition{{Type: musterv1.BroadcastJobNodesEligible, Status: metav1.ConditionFalse, Reason: reason, Message: "m"}}
		}
		return s
	}
	for _, tc := range []struct {
		name          string
		before, after string
		want          bool
	}{
		{"first verdict", "", musterv1.ReasonNoEligibleClusters, true},
		{"nodes went away", musterv1.BroadcastJobReasonNodesEligible, musterv1.ReasonNoEligibleClusters, true},
		{"still stuck", musterv1.ReasonNoEligibleClusters, musterv1.ReasonNoEligibleClusters, false},
		{"not stuck", "", musterv1.BroadcastJobReasonNodesEligible, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := newlyWithoutClusters(status(tc.before), status(tc.after)) != nil; got != tc.want {
				t.Errorf("newlyWithoutClusters = %v, want %v", got, tc.want)
			}
		})
	}
}
