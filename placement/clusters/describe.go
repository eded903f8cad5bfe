package clusters

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// MaxListed caps how many names a message lists; the rest are counted as "and N more", so
// an object placed on thousands of clusters still gets a message a person reads.
const MaxListed = 10

// exclusion says, in the singular and the plural, why clusters were excluded.
var exclusion = map[string][2]string{
	NotAccepted:      {"is not accepted", "are not accepted"},
	Leaving:          {"is leaving the fleet", "are leaving the fleet"},
	NotNamed:         {"is not in clusterNames", "are not in clusterNames"},
	SelectorMismatch: {"does not match the cluster selector", "do not match the cluster selector"},
	UntoleratedTaint: {"has a taint the placement does not tolerate", "have taints the placement does not tolerate"},
	NotAvailable:     {"is not available", "are not available"},
	InvalidPlacement: {"cannot be matched by the invalid cluster selector", "cannot be matched by the invalid cluster selector"},
}

// DescribeExcluded turns Eligible's count of excluded clusters by reason into a sentence:
// "3 clusters excluded: 2 do not match the cluster selector, 1 is not accepted". The
// largest group comes first, ties in reason order, so the sentence is the same on every
// pass. An empty count says the fleet has no member clusters.
func DescribeExcluded(excluded map[string]int) string {
	if len(excluded) == 0 {
		return "the fleet has no member clusters"
	}
	reasons := slices.SortedFunc(maps.Keys(excluded), func(a, b string) int {
		return cmp.Or(cmp.Compare(excluded[b], excluded[a]), cmp.Compare(a, b))
	})
	total := 0
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		n := excluded[r]
		total += n
		parts[i] = strconv.Itoa(n) + " " + excludedBecause(r, n)
	}
	return fmt.Sprintf("%s excluded: %s", Count(total, "cluster"), strings.Join(parts, ", "))
}

func excludedBecause(reason string, n int) string {
	phrases, ok := exclusion[reason]
	if !ok {
		return "excluded for reason " + reason
	}
	if n == 1 {
		return phrases[0]
	}
	return phrases[1]
}

// Count is "1 cluster", "2 clusters": n and the noun, plural unless n is 1.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// Names lists names for a message: "a", "a and b", "a, b and c"; past MaxListed the rest
// are counted: "a, b, …, j and 5 more". The caller sorts them.
func Names(names []string) string {
	switch {
	case len(names) == 0:
		return "none"
	case len(names) == 1:
		return names[0]
	case len(names) > MaxListed:
		return strings.Join(names[:MaxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-MaxListed)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
