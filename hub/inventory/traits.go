package inventory

import (
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// traits gives the nodes of one NodeSlice that have equal taints, or equal allocatable
// resources, one shared list or map and one number for it. Fitness reads equal lists
// alike, so a slice's index groups its nodes by these numbers (kinds.go), and memory holds
// each list once: nodes of one instance type share their allocatable map.
type traits struct {
	taints      interner[[]corev1.Taint]
	allocatable interner[corev1.ResourceList]
}

func newTraits() *traits {
	return &traits{
		taints:      interner[[]corev1.Taint]{key: taintsKey, ids: map[string]uint32{}},
		allocatable: interner[corev1.ResourceList]{key: allocatableKey, ids: map[string]uint32{}},
	}
}

// internTaints returns the shared list equal to taints and its number; an empty list is
// kept as it is and numbered 0.
func (t *traits) internTaints(taints []corev1.Taint) ([]corev1.Taint, uint32) {
	return t.taints.intern(taints, len(taints))
}

// internAllocatable returns the shared map equal to list and its number; an empty map is
// kept as it is and numbered 0.
func (t *traits) internAllocatable(list corev1.ResourceList) (corev1.ResourceList, uint32) {
	return t.allocatable.intern(list, len(list))
}

// interner keeps one value of each key and numbers them from 1.
type interner[T any] struct {
	key    func(T) string
	ids    map[string]uint32
	values []T
}

// intern returns the kept value equal to v (by key) and its number, keeping v when none is;
// an empty v (size 0) is returned as it is, numbered 0.
func (in *interner[T]) intern(v T, size int) (T, uint32) {
	if size == 0 {
		return v, 0
	}
	k := in.key(v)
	if id, ok := in.ids[k]; ok {
		return in.values[id-1], id
	}
	in.values = append(in.values, v)
	id := uint32(len(in.values))
	in.ids[k] = id
	return v, id
}

// taintsKey writes every field of every taint, quoted, in order: equal keys, equal lists.
func taintsKey(taints []corev1.Taint) string {
	var b strings.Builder
	for _, t := range taints {
		b.WriteString(strconv.Quote(t.Key))
		b.WriteString(strconv.Quote(t.Value))
		b.WriteString(strconv.Quote(string(t.Effect)))
		if t.TimeAdded != nil {
			b.WriteString(t.TimeAdded.UTC().Format(time.RFC3339Nano))
		}
		b.WriteByte(';')
	}
	return b.String()
}

// allocatableKey writes each resource, sorted, with its quantity in canonical form, which
// loses no precision, and its format, which sums keep: equal keys, equal maps for every
// reader.
func allocatableKey(list corev1.ResourceList) string {
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		q := list[corev1.ResourceName(name)]
		b.WriteString(strconv.Quote(name))
		b.WriteString(q.String())
		b.WriteString(string(q.Format))
		b.WriteByte(';')
	}
	return b.String()
}
