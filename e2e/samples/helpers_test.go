//go:build e2e

package samples

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionSummary is "Type=Status(Reason)" for each condition, for failure messages.
func conditionSummary(conds []metav1.Condition) string {
	parts := make([]string, 0, len(conds))
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return strings.Join(parts, " ")
}

// coversIndexes tells whether the completed-index lists, in the Job's interval format
// ("0-3,7"), hold every index from 0 to n-1 exactly once between them.
func coversIndexes(lists []string, n int) bool {
	seen := make([]int, n)
	for _, list := range lists {
		for _, part := range strings.Split(list, ",") {
			if part == "" {
				continue
			}
			lo, hi, found := strings.Cut(part, "-")
			if !found {
				hi = lo
			}
			from, err1 := strconv.Atoi(lo)
			to, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || from < 0 || to >= n || from > to {
				return false
			}
			for i := from; i <= to; i++ {
				seen[i]++
			}
		}
	}
	for _, s := range seen {
		if s != 1 {
			return false
		}
	}
	return true
}
