package broadcastjob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/clusters"
)

// clusterNames names the clusters in a message, capped: "cluster a", "clusters a and b".
func clusterNames(cs []*cluster) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	if len(names) == 1 {
		return "cluster " + names[0]
	}
	return "clusters " + clusters.Names(names)
}

// noEligibleClusters says why no cluster runs the job: "no member cluster matches the
// placement; 2 clusters excluded: 2 do not match the cluster selector".
func noEligibleClusters(excluded map[string]int) string {
	return "no member cluster matches the placement; " + clusters.DescribeExcluded(excluded)
}

// nodesEligibleMessage: "1 node is eligible in 1 cluster", "5 nodes are eligible in 2
// clusters".
func nodesEligibleMessage(nodes int32, inClusters int) string {
	verb := "nodes are"
	if nodes == 1 {
		verb = "node is"
	}
	return fmt.Sprintf("%d %s eligible in %s", nodes, verb, clusters.Count(inClusters, "cluster"))
}

// newlyWithoutClusters returns after's NodesEligible condition when it says no cluster
// can run the job and before's did not: the moment the job gets stuck, logged once.
func newlyWithoutClusters(before, after *musterv1.BroadcastJobStatus) *metav1.Condition {
	c := meta.FindStatusCondition(after.Conditions, musterv1.BroadcastJobNodesEligible)
	if c == nil || c.Reason != musterv1.ReasonNoEligibleClusters {
		return nil
	}
	if prev := meta.FindStatusCondition(before.Conditions, musterv1.BroadcastJobNodesEligible); prev != nil && prev.Reason == c.Reason {
		return nil
	}
	return c
}
