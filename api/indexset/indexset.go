// Package indexset is a set of Job completion indexes, kept as runs, in the "1,3-5,7" form
// the Job API writes (status.completedIndexes, success policy rules). The agent's Job
// controller counts finished indexes with it; the hub maps a shard's indexes to the
// fleet's and works out what an evicted shard left unfinished.
package indexset

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Set is a set of completion indexes kept as sorted, disjoint, non-adjacent runs. An
// Indexed job may ask for up to 2^31-1 completions, and its finished indexes mostly form
// long runs, so the set's size follows the number of gaps between its indexes, never the
// number of completions a user typed. The zero Set is empty.
type Set struct {
	runs []run
}

// run is the closed interval [first, last].
type run struct {
	first, last int
}

// Parse reads the "1,3-5,7" form, keeping the indexes below limit (a status may hold
// higher ones just after a scale-down). Malformed parts are skipped; unsorted or
// overlapping parts are merged.
func Parse(s string, limit int) Set {
	var runs []run
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
		last = min(last, limit-1)
		if first > last {
			continue
		}
		runs = append(runs, run{first, last})
	}
	return Set{runs: merged(runs)}
}

// Range is the set [first, end).
func Range(first, end int) Set {
	if first >= end {
		return Set{}
	}
	return Set{runs: []run{{first, end - 1}}}
}

// merged sorts runs and joins the ones that overlap or touch.
func merged(runs []run) []run {
	slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(a.first, b.first) })
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

// find returns the position of the first run that ends at or after i.
func (s Set) find(i int) int {
	pos, _ := slices.BinarySearchFunc(s.runs, i, func(r run, i int) int { return cmp.Compare(r.last, i) })
	return pos
}

// Has says whether i is in the set.
func (s Set) Has(i int) bool {
	pos := s.find(i)
	return pos < len(s.runs) && s.runs[pos].first <= i
}

// Add puts i into the set, joining it with the runs it touches.
func (s *Set) Add(i int) {
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
		s.runs = slices.Insert(s.runs, pos, run{i, i})
	}
}

// Len is the number of indexes in the set.
func (s Set) Len() int {
	n := 0
	for _, r := range s.runs {
		n += r.last - r.first + 1
	}
	return n
}

// Runs is the number of runs the set keeps: what its work and size follow.
func (s Set) Runs() int { return len(s.runs) }

// NextAbsent returns the smallest index at or after i that is not in the set.
func (s Set) NextAbsent(i int) int {
	if pos := s.find(i); pos < len(s.runs) && s.runs[pos].first <= i {
		return s.runs[pos].last + 1
	}
	return i
}

// Overlap counts the indexes in both sets, walking their runs side by side.
func (s Set) Overlap(o Set) int {
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

// Union is the indexes in s or o.
func (s Set) Union(o Set) Set {
	return Set{runs: merged(append(slices.Clone(s.runs), o.runs...))}
}

// Minus is the indexes of s not in o, walking their runs side by side.
func (s Set) Minus(o Set) Set {
	var out []run
	j := 0
	for _, r := range s.runs {
		first := r.first
		for j < len(o.runs) && o.runs[j].last < first {
			j++
		}
		for k := j; k < len(o.runs) && o.runs[k].first <= r.last; k++ {
			if o.runs[k].first > first {
				out = append(out, run{first, o.runs[k].first - 1})
			}
			first = max(first, o.runs[k].last+1)
		}
		if first <= r.last {
			out = append(out, run{first, r.last})
		}
	}
	return Set{runs: out}
}

// Slice is the set's members at positions [from, to) in increasing order: the indexes a
// shard runs as its local indexes from to to-1, when the set is what it runs.
func (s Set) Slice(from, to int) Set {
	var out []run
	pos := 0
	for _, r := range s.runs {
		n := r.last - r.first + 1
		lo, hi := max(from, pos), min(to, pos+n)
		if lo < hi {
			out = append(out, run{r.first + lo - pos, r.first + hi - pos - 1})
		}
		if pos += n; pos >= to {
			break
		}
	}
	return Set{runs: out}
}

// Nth is the set's member at position i in increasing order, and whether there is one.
func (s Set) Nth(i int) (int, bool) {
	if i < 0 {
		return 0, false
	}
	for _, r := range s.runs {
		if n := r.last - r.first + 1; i >= n {
			i -= n
			continue
		}
		return r.first + i, true
	}
	return 0, false
}

// Select is the members of s at the positions local holds: the fleet's indexes of a shard
// that runs s, given the local indexes its Job finished. It walks runs, never indexes.
func (s Set) Select(local Set) Set {
	var out []run
	for _, r := range local.runs {
		out = append(out, s.Slice(r.first, r.last+1).runs...)
	}
	return Set{runs: merged(out)}
}

// String writes the set in the API's form: increasing, runs of three or more as a range.
func (s Set) String() string {
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
