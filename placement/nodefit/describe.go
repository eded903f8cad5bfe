package nodefit

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// unfitBecause says, in the singular and the plural, why nodes do not fit.
var unfitBecause = map[Reason][2]string{
	NodeNameMismatch:      {"is not the pod's nodeName", "are not the pod's nodeName"},
	NodeAffinityMismatch:  {"does not match the pod's node affinity", "do not match the pod's node affinity"},
	UntoleratedTaint:      {"has a taint the pod does not tolerate", "have taints the pod does not tolerate"},
	NodeUnschedulable:     {"is cordoned", "are cordoned"},
	NodeNotReady:          {"is not ready", "are not ready"},
	InsufficientResources: {"has too little allocatable capacity for the pod", "have too little allocatable capacity for the pod"},
}

// DescribeUnfit says why none of total nodes fits, from a count of nodes by Reason:
// "none of 3 nodes fits the pod template: 2 have taints the pod does not tolerate, 1 is
// not ready". The largest group comes first, ties in reason order.
func DescribeUnfit(total int, unfit map[Reason]int) string {
	if total == 0 {
		return "the cluster has no nodes"
	}
	reasons := slices.SortedFunc(maps.Keys(unfit), func(a, b Reason) int {
		return cmp.Or(cmp.Compare(unfit[b], unfit[a]), cmp.Compare(a, b))
	})
	parts := make([]string, 0, len(reasons))
	for _, r := range reasons {
		parts = append(parts, strconv.Itoa(unfit[r])+" "+because(r, unfit[r]))
	}
	noun := "nodes"
	if total == 1 {
		noun = "node"
	}
	return fmt.Sprintf("none of %d %s fits the pod template: %s", total, noun, strings.Join(parts, ", "))
}

func because(r Reason, n int) string {
	phrases, ok := unfitBecause[r]
	if !ok {
		return "do not fit for reason " + string(r)
	}
	if n == 1 {
		return phrases[0]
	}
	return phrases[1]
}
