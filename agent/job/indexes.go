package job

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// indexSet is a set of completion indexes kept as sorted, disjoint, non-adjacent runs.
// An Indexed job may ask for up to 2^31-1 completions, and its finished indexes mostly
// form long runs, so the set's size follows the number of gaps between finished indexes,
// never the number of completions a user typed.
type indexSet struct {
	runs []indexRun
}

// indexRun is the closed interval [first, last].
type indexRun struct {
	first, last int
}

// parseIndexes reads the "1,3-5,7" form of status.completedIndexes and success policy
// rules, keeping the indexes below completions (the status may hold higher ones just after
// a scale-down). Malformed parts are skipped; unsorted or overlapping parts are merged.
func parseIndexes(s string, completions int) indexSet {
	var runs []indexRun
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			continue
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		last = min(last, completions-1)
		if first > last {
			continue
		}
		runs = append(runs, indexRun{first, last})
	}
	return indexSet{runs: merged(runs)}
}

// merged sorts runs and joins the ones that overlap or touch.
func merged(runs []indexRun) []indexRun {
	slices.SortFunc(runs, compareRuns)
	out := runs[:0]
	for _, r := range runs {
		if n := len(out); n > 0 && r.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, r.last)
			continue
		}
		out = append(out, r)
	}
	return out
}

func compareRuns(a, b indexRun) int { return cmp.Compare(a.first, b.first) }

// find returns the position of the first run that ends at or after i.
func (s indexSet) find(i int) int {
	pos, _ := slices.BinarySearchFunc(s.runs, i, func(r indexRun, i int) int { return cmp.Compare(r.last, i) })
	return pos
}

func (s indexSet) has(i int) bool {
	pos := s.find(i)
	return pos < len(s.runs) && s.runs[pos].first <= i
}

// add puts i into the set, joining it with the runs it touches.
func (s *indexSet) add(i int) {
	pos := s.find(i)
	switch {
	case pos < len(s.runs) && s.runs[pos].first <= i:
		return
	case pos < len(s.runs) && s.runs[pos].first == i+1:
		s.runs[pos].first = i
		if pos > 0 && s.runs[pos-1].last == i-1 {
			s.runs[pos-1].last = s.runs[pos].last
			s.runs = slices.Delete(s.runs, pos, pos+1)
		}
	case pos > 0 && s.runs[pos-1].last == i-1:
		s.runs[pos-1].last = i
	default:
		s.runs = slices.Insert(s.runs, pos, indexRun{i, i})
	}
}

// count is the number of indexes in the set.
func (s indexSet) count() int {
	n := 0
	for _, r := range s.runs {
		n += r.last - r.first + 1
	}
	return n
}

// nextAbsent returns the smallest index at or after i that is not in the set.
func (s indexSet) nextAbsent(i int) int {
	if pos := s.find(i); pos < len(s.runs) && s.runs[pos].first <= i {
		return s.runs[pos].last + 1
	}
	return i
}

// overlap counts the indexes in both sets, walking their runs side by side.
func (s indexSet) overlap(o indexSet) int {
	n := 0
	for i, j := 0, 0; i < len(s.runs) && j < len(o.runs); {
		a, b := s.runs[i], o.runs[j]
		if lo, hi := max(a.first, b.first), min(a.last, b.last); lo <= hi {
			n += hi - lo + 1
		}
		if a.last < b.last {
			i++
		} else {
			j++
		}
	}
	return n
}

// String writes the set in the API's form: increasing, runs of three or more as a range.
func (s indexSet) String() string {
	var b strings.Builder
	for _, r := range s.runs {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(r.first))
		switch {
		case r.last == r.first+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(r.last))
		case r.last > r.first:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(r.last))
		}
	}
	return b.String()
}
