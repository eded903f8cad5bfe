package clusters

import (
	"fmt"
	"strings"
	"testing"
)

func TestDescribeExcluded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		excluded map[string]int
		want     string
	}{
		{"empty fleet", nil, "the fleet has no member clusters"},
		{"one cluster", map[string]int{NotAccepted: 1}, "1 cluster excluded: 1 is not accepted"},
		{"plural", map[string]int{SelectorMismatch: 2}, "2 clusters excluded: 2 do not match the cluster selector"},
		{"largest group first, ties by reason",
			map[string]int{NotAvailable: 1, SelectorMismatch: 3, Leaving: 1},
			"5 clusters excluded: 3 do not match the cluster selector, 1 is leaving the fleet, 1 is not available"},
		{"every reason has words", map[string]int{NotNamed: 1, UntoleratedTaint: 2, InvalidPlacement: 3},
			"6 clusters excluded: 3 cannot be matched by the invalid cluster selector, 2 have taints the placement does not tolerate, 1 is not in clusterNames"},
		{"unknown reason", map[string]int{"Custom": 2}, "2 clusters excluded: 2 excluded for reason Custom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescribeExcluded(tc.excluded); got != tc.want {
				t.Errorf("DescribeExcluded(%v)\n got %q\nwant %q", tc.excluded, got, tc.want)
			}
		})
	}
}

func TestDescribeExcludedIsDeterministic(t *testing.T) {
	excluded := map[string]int{NotAccepted: 1, Leaving: 1, NotNamed: 1, SelectorMismatch: 1, UntoleratedTaint: 1, NotAvailable: 1}
	first := DescribeExcluded(excluded)
	for range 50 {
		if got := DescribeExcluded(excluded); got != first {
			t.Fatalf("DescribeExcluded changed between calls: %q then %q", first, got)
		}
	}
}

func TestNames(t *testing.T) {
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("member%05d", i)
	}
	for _, tc := range []struct {
		name  string
		names []string
		want  string
	}{
		{"none", nil, "none"},
		{"one", []string{"a"}, "a"},
		{"two", []string{"a", "b"}, "a and b"},
		{"three", []string{"a", "b", "c"}, "a, b and c"},
		{"at the cap", many[:MaxListed], strings.Join(many[:MaxListed-1], ", ") + " and " + many[MaxListed-1]},
		{"past the cap", many, strings.Join(many[:MaxListed], ", ") + " and 9990 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Names(tc.names); got != tc.want {
				t.Errorf("Names\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 clusters", 1: "1 cluster", 2: "2 clusters"} {
		if got := Count(n, "cluster"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
