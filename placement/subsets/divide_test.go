package subsets_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/musterhq/muster/placement/subsets"
)

func TestDivide(t *testing.T) {
	tests := []struct {
		name     string
		n        int32
		kept     map[string]int32
		clusters []string
		holding  []string
		fit      map[string]int
		want     map[string]int32
	}{
		{name: "new replicas follow the nodes that fit", n: 6,
			clusters: []string{"m1", "m2"}, holding: []string{"m1", "m2"}, fit: map[string]int{"m1": 1, "m2": 2},
			want: map[string]int32{"m1": 2, "m2": 4}},
		{name: "evenly when no node is known to fit", n: 5,
			clusters: []string{"m1", "m2"}, holding: []string{"m1", "m2"},
			want: map[string]int32{"m1": 3, "m2": 2}},
		{name: "kept replicas stay where they are", n: 4,
			kept: map[string]int32{"m1": 3, "m2": 1}, clusters: []string{"m1", "m2"}, holding: []string{"m1", "m2"},
			want: map[string]int32{"m1": 3, "m2": 1}},
		{name: "a scale-up adds to the kept replicas by fit", n: 7,
			kept: map[string]int32{"m1": 3, "m2": 1}, clusters: []string{"m1", "m2"}, holding: []string{"m1", "m2"}, fit: map[string]int{"m2": 1},
			want: map[string]int32{"m1": 3, "m2": 4}},
		{name: "a scale-down takes from the last holding cluster first", n: 2,
			kept: map[string]int32{"m1": 2, "m2": 3}, clusters: []string{"m1", "m2"}, holding: []string{"m1", "m2"},
			want: map[string]int32{"m1": 2, "m2": 0}},
		{name: "a cluster the subset no longer holds gives its replicas up", n: 4,
			kept: map[string]int32{"m1": 2, "gone": 2}, clusters: []string{"m1", "m2"}, holding: []string{"m1", "m2"},
			want: map[string]int32{"m1": 3, "m2": 1}},
		{name: "an unavailable cluster keeps its replicas but gets no new ones", n: 5,
			kept: map[string]int32{"m1": 2}, clusters: []string{"m2"}, holding: []string{"m1", "m2"},
			want: map[string]int32{"m1": 2, "m2": 3}},
		{name: "no cluster takes new replicas: only what is kept", n: 5,
			kept: map[string]int32{"m1": 2}, holding: []string{"m1"},
			want: map[string]int32{"m1": 2}},
		{name: "zero replicas", n: 0,
			kept: map[string]int32{"m1": 2}, clusters: []string{"m1"}, holding: []string{"m1"},
			want: map[string]int32{"m1": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := subsets.Divide(tc.n, tc.kept, tc.clusters, tc.holding, tc.fit)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Divide(%d) (-want +got):\n%s", tc.n, diff)
			}
		})
	}
}
