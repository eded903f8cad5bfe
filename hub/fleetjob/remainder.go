package fleetjob

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/api/indexset"
	"github.com/musterhq/muster/api/names"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// remainder is what an evicted shard of a Divided job left unfinished, to be divided
// among the clusters that can take it.
type remainder struct {
	// parallelism is the evicted shard's; completions what is left of its own (nil for a
	// job without completions); indexes the fleet indexes left, for an Indexed job.
	parallelism, completions *int32
	indexed                  bool
	indexes                  indexset.Set
	// carried counts the pods of the evicted shard (and of those it replaced) that the hub
	// saw succeed: they stay counted, once, with the first part of the rest; done are the
	// fleet indexes they completed, for an Indexed job.
	carried int32
	done    indexset.Set
}

// remainderOf is what shard s of a job of spec leaves unfinished: for an Indexed job
// exactly the indexes the hub has not seen succeed, otherwise the completions left. It
// says false when nothing is left (a job without completions is done at its first success).
func remainderOf(spec *batchv1.JobSpec, s shardState) (remainder, bool) {
	var succeeded int32
	var done string
	if s.status != nil {
		succeeded, done = s.status.Succeeded, s.status.CompletedIndexes
	}
	r := remainder{parallelism: s.parallelism, carried: s.carried + succeeded}
	switch {
	case ptr.Deref(spec.CompletionMode, batchv1.NonIndexedCompletion) == batchv1.IndexedCompletion:
		fleet := s.fleet()
		r.indexed = true
		r.indexes = fleet.Minus(fleet.Select(indexset.Parse(done, int(ptr.Deref(s.completions, 0)))))
		r.completions = ptr.To(int32(r.indexes.Len()))
		r.carried = s.carried + int32(fleet.Len()-r.indexes.Len())
		r.done = fleet.Minus(r.indexes).Union(s.carriedSet())
		return r, r.indexes.Len() > 0
	case s.completions != nil:
		r.completions = ptr.To(*s.completions - succeeded)
		return r, *r.completions > 0
	}
	return r, succeeded == 0
}

// uncovered is what the remainder of shard s leaves that its parts placed so far do not
// run: all of it before any part exists; the rest of a placement an error cut short. It
// says false when the parts cover it. The evicted shard's succeeded pods are carried by
// the first part written, so a later attempt carries none.
func uncovered(spec *batchv1.JobSpec, s shardState, parts []shardState) (remainder, bool) {
	r, left := remainderOf(spec, s)
	if !left || len(parts) == 0 {
		return r, left
	}
	var placed int32
	var covered indexset.Set
	for _, p := range parts {
		placed += ptr.Deref(p.completions, 0)
		covered = covered.Union(p.fleet())
		if p.carried > 0 {
			r.carried, r.done = 0, indexset.Set{}
		}
	}
	switch {
	case r.indexed:
		r.indexes = r.indexes.Minus(covered)
		r.completions = ptr.To(int32(r.indexes.Len()))
		return r, r.indexes.Len() > 0
	case r.completions != nil:
		r.completions = ptr.To(max(*r.completions-placed, 0))
		return r, *r.completions > 0
	}
	// A job without completions is done at its first success, which any part may bring.
	return r, false
}

// partOf names the parts placed, at the given attempt, for the eviction of the shard in
// Work uid: the same on each hub replica and at each retry of an attempt, so a part is
// never written twice; a later attempt (the rest of a placement an error cut short,
// numbered by the parts that exist) gets names of its own.
func partOf(uid string, attempt int) string {
	if attempt == 0 {
		return names.Hash("fleetjob-part", uid)[:8]
	}
	return names.Hash("fleetjob-part", uid, strconv.Itoa(attempt))[:8]
}

// placeRemainder divides r among eligible clusters (sorted; fit counts their nodes that
// fit the pod template) by the job's division, as a first placement divides the whole:
// weights where the division names the clusters, their fitting nodes otherwise. Each
// part of an Indexed job runs its share of the indexes left, in order. None when no
// cluster can take any of it.
func placeRemainder(fj *musterv1.FleetJob, from shardState, r remainder, attempt int, eligible []string, fit map[string]int) []shard {
	spec := batchv1.JobSpec{Parallelism: r.parallelism, Completions: r.completions, CompletionMode: fj.Spec.Template.Spec.CompletionMode}
	parts := divideSpec(&spec, fj.Spec.Placement.Division, eligible, fit)
	if len(parts) == 0 {
		// The division's weights may name only the clusters the job left.
		parts = divideSpec(&spec, nil, eligible, fit)
	}
	for i := range parts {
		p := &parts[i]
		// A part of a suspended shard (the job was stopped) starts suspended too.
		p.part, p.replaces, p.suspend = partOf(string(from.workUID), attempt), from.workUID, from.suspend
		if r.indexed && p.indexes != nil {
			p.fleetIndexes = r.indexes.Slice(int(p.indexes.Start), int(p.indexes.End)).String()
			p.indexes = nil
		}
	}
	if len(parts) > 0 {
		parts[0].carried, parts[0].carriedIndexes = r.carried, r.done.String()
	}
	return parts
}
