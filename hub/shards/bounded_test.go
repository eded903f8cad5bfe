package shards

import (
	"slices"
	"strings"
	"testing"
)

func TestBoundedKeepsTheFirstRankedInTheirOrder(t *testing.T) {
	// Entries are "<name>:<rank>".
	rank := func(e string) int { return int(e[strings.Index(e, ":")+1] - '0') }
	for _, c := range []struct {
		name        string
		entries     []string
		limit       int
		want        []string
		wantOmitted int
	}{
		{"under the limit", []string{"a:2", "b:0"}, 3, []string{"a:2", "b:0"}, 0},
		{"at the limit", []string{"a:2", "b:0", "c:1"}, 3, []string{"a:2", "b:0", "c:1"}, 0},
		{"the lowest ranks, in their order", []string{"a:2", "b:0", "c:1", "d:0", "e:2"}, 3, []string{"b:0", "c:1", "d:0"}, 2},
		{"ties go to the earlier", []string{"a:1", "b:1", "c:1", "d:1"}, 2, []string{"a:1", "b:1"}, 2},
		{"none kept", []string{"a:0"}, 0, []string{}, 1},
		{"nothing", nil, 5, nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, omitted := Bounded(c.entries, c.limit, rank)
			if !slices.Equal(got, c.want) || omitted != c.wantOmitted {
				t.Errorf("Bounded = %q, %d; want %q, %d", got, omitted, c.want, c.wantOmitted)
			}
		})
	}
}
