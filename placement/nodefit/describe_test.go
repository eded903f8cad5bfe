package nodefit

import "testing"

func TestDescribeUnfit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int
		unfit map[Reason]int
		want  string
	}{
		{"no nodes", 0, nil, "the cluster has no nodes"},
		{"one node", 1, map[Reason]int{NodeNotReady: 1}, "none of 1 node fits the pod template: 1 is not ready"},
		{"largest group first, ties by reason", 5,
			map[Reason]int{UntoleratedTaint: 2, NodeUnschedulable: 1, InsufficientResources: 2},
			"none of 5 nodes fits the pod template: 2 have too little allocatable capacity for the pod, 2 have taints the pod does not tolerate, 1 is cordoned"},
		{"affinity and name", 3, map[Reason]int{NodeAffinityMismatch: 2, NodeNameMismatch: 1},
			"none of 3 nodes fits the pod template: 2 do not match the pod's node affinity, 1 is not the pod's nodeName"},
		{"unknown reason", 2, map[Reason]int{"Custom": 2}, "none of 2 nodes fits the pod template: 2 do not fit for reason Custom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescribeUnfit(tc.total, tc.unfit); got != tc.want {
				t.Errorf("DescribeUnfit\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
