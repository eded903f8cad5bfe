package job

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// indexSet is a set of completion indexes. Jobs here have at most 100k completions, so
// a sorted slice is small and plain.
type indexSet map[int]bool

// parseIndexes reads the "1,3-5,7" form of status.completedIndexes, keeping the indexes
// below completions (the status may hold higher ones just after a scale-down).
func parseIndexes(s string, completions int) indexSet {
	out := indexSet{}
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := first; i <= last && i < completions; i++ {
			out[i] = true
		}
	}
	return out
}

func (s indexSet) sorted() []int {
	out := make([]int, 0, len(s))
	for i := range s {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// String writes the set in the API's form: increasing, runs of three or more as a range.
func (s indexSet) String() string {
	idx := s.sorted()
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		switch {
		case j == i:
			fmt.Fprintf(&b, "%d", idx[i])
		case j == i+1:
			fmt.Fprintf(&b, "%d,%d", idx[i], idx[j])
		default:
			fmt.Fprintf(&b, "%d-%d", idx[i], idx[j])
		}
		i = j + 1
	}
	return b.String()
}
