package shards_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
)

func TestOwnerOf(t *testing.T) {
	toFleetJob := shards.OwnerOf(musterv1.FleetJobNameLabel, musterv1.FleetJobNamespaceLabel)
	tests := []struct {
		name   string
		labels map[string]string
		want   []reconcile.Request
	}{
		{
			name:   "a FleetJob's shard",
			labels: map[string]string{musterv1.FleetJobNameLabel: "render", musterv1.FleetJobNamespaceLabel: "team-a", musterv1.ClusterNameLabel: "m1"},
			want:   []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "render"}}},
		},
		{
			name:   "a BroadcastJob's shard is another controller's",
			labels: map[string]string{musterv1.BroadcastJobNameLabel: "prefetch", musterv1.BroadcastJobNamespaceLabel: "team-a"},
		},
		{name: "a name without its namespace", labels: map[string]string{musterv1.FleetJobNameLabel: "render"}},
		{name: "a hand-made Work"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "muster-member-m1", Labels: tc.labels}}
			if diff := cmp.Diff(tc.want, toFleetJob(context.Background(), w)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
