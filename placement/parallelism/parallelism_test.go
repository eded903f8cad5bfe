package parallelism

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr(v int32) *int32 { return &v }

func TestResolve(t *testing.T) {
	cases := []struct {
		name    string
		p       *intstr.IntOrString
		desired int32
		want    *int32
	}{
		{"unset means no cap", nil, 10, nil},
		{"a number", new(intstr.FromInt32(3)), 10, ptr(3)},
		{"a number above desired stays", new(intstr.FromInt32(30)), 10, ptr(30)},
		{"30% of 20", new(intstr.FromString("30%")), 20, ptr(6)},
		{"percent rounds up", new(intstr.FromString("30%")), 7, ptr(3)},
		{"1% of one node is one pod", new(intstr.FromString("1%")), 1, ptr(1)},
		{"0% is zero", new(intstr.FromString("0%")), 100, ptr(0)},
		{"percent of nothing", new(intstr.FromString("50%")), 0, ptr(0)},
		{"malformed caps at zero", new(intstr.FromString("lots")), 5, ptr(0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Resolve(tc.p, tc.desired)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("Resolve = %v, want %v", show(got), show(tc.want))
			}
		})
	}
}

func show(p *int32) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestDivide(t *testing.T) {
	cases := []struct {
		name     string
		budget   int32
		clusters []Cluster
		want     map[string]int32
	}{
		{
			name: "fresh clusters split evenly", budget: 6,
			clusters: []Cluster{{Name: "a", Remaining: 10}, {Name: "b", Remaining: 10}},
			want:     map[string]int32{"a": 3, "b": 3},
		},
		{
			name: "in proportion to the remaining pods, remainder to the largest fraction", budget: 6,
			clusters: []Cluster{{Name: "a", Remaining: 15}, {Name: "b", Remaining: 5}},
			want:     map[string]int32{"a": 5, "b": 1},
		},
		{
			name: "a budget above the work gives every cluster all it needs", budget: 100,
			clusters: []Cluster{{Name: "a", Remaining: 3}, {Name: "b", Remaining: 0}},
			want:     map[string]int32{"a": 3, "b": 0},
		},
		{
			name: "a finished cluster's share moves to the others once it is settled", budget: 6,
			clusters: []Cluster{
				{Name: "a", Remaining: 0, Active: 0, Assigned: ptr(3), Applied: ptr(3)},
				{Name: "b", Remaining: 5, Active: 3, Assigned: ptr(3), Applied: ptr(3)},
			},
			want: map[string]int32{"a": 0, "b": 5},
		},
		{
			name: "a cluster that has not picked up its lower share still holds its old one", budget: 6,
			clusters: []Cluster{
				{Name: "a", Remaining: 0, Active: 0, Assigned: ptr(0), Applied: ptr(3)},
				{Name: "b", Remaining: 5, Active: 3, Assigned: ptr(3), Applied: ptr(3)},
			},
			want: map[string]int32{"a": 0, "b": 3},
		},
		{
			name: "running pods above a lowered share still count", budget: 6,
			clusters: []Cluster{
				{Name: "a", Remaining: 3, Active: 3, Assigned: ptr(3), Applied: ptr(3)},
				{Name: "b", Remaining: 9, Active: 3, Assigned: ptr(3), Applied: ptr(3)},
			},
			// Ideal 2/4 (the tied half goes to a); a keeps 3 running, so b cannot grow yet.
			want: map[string]int32{"a": 2, "b": 3},
		},
		{
			name: "an unsettled raise is not changed again", budget: 4,
			clusters: []Cluster{
				{Name: "a", Remaining: 1, Active: 0, Assigned: ptr(4), Applied: ptr(2)},
				{Name: "b", Remaining: 10, Active: 0, Assigned: ptr(0), Applied: ptr(0)},
			},
			want: map[string]int32{"a": 4, "b": 0},
		},
		{
			name: "a new cluster gets budget only out of what is free", budget: 4,
			clusters: []Cluster{
				{Name: "a", Remaining: 8, Active: 4, Assigned: ptr(4), Applied: ptr(4)},
				{Name: "c", Remaining: 8},
			},
			want: map[string]int32{"a": 2, "c": 0},
		},
		{
			name: "zero budget", budget: 0,
			clusters: []Cluster{{Name: "a", Remaining: 10}},
			want:     map[string]int32{"a": 0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Divide(tc.budget, tc.clusters)
			if !maps.Equal(got, tc.want) {
				t.Errorf("Divide = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDivideNeverExceedsBudget replays a run where clusters pick up shares late and pods
// finish, and checks the invariant the fleet relies on after every step.
func TestDivideNeverExceedsBudget(t *testing.T) {
	const budget = 6
	type member struct {
		remaining, active int32
		assigned, applied *int32
	}
	fleet := map[string]*member{"a": {remaining: 4}, "b": {remaining: 12}, "c": {remaining: 7}}
	names := []string{"a", "b", "c"}
	for step := 0; step < 200; step++ {
		var cs []Cluster
		for _, n := range names {
			m := fleet[n]
			cs = append(cs, Cluster{Name: n, Remaining: m.remaining, Active: m.active, Assigned: m.assigned, Applied: m.applied})
		}
		for n, share := range Divide(budget, cs) {
			fleet[n].assigned = ptr(share)
		}
		// One cluster per step sees its share (round robin, so the others lag) and starts
		// pods up to it; every cluster finishes one running pod every third step.
		seen := fleet[names[step%len(names)]]
		seen.applied = ptr(*seen.assigned)
		if room := min(*seen.applied, seen.remaining) - seen.active; room > 0 {
			seen.active += room
		}
		var total int32
		for _, n := range names {
			m := fleet[n]
			if step%3 == 0 && m.active > 0 {
				m.active--
				m.remaining--
			}
			total += m.active
		}
		if total > budget {
			t.Fatalf("step %d: %d pods active, budget %d", step, total, budget)
		}
	}
	for _, n := range names {
		if fleet[n].remaining != 0 {
			t.Errorf("cluster %s still has %d pods to run after 200 steps", n, fleet[n].remaining)
		}
	}
}
