//go:build e2e

package join

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

func TestJoinedClustersBecomeAvailableWithin30s(t *testing.T) {
	for _, name := range joined {
		budget := 30*time.Second - time.Since(joinStarted)
		mc, err := framework.WaitForClusterCondition(t.Context(), fleet.Hub, name, musterv1.MemberClusterAvailable, metav1.ConditionTrue, max(budget, time.Millisecond))
		if err != nil {
			t.Fatalf("cluster %s not Available within 30s of join: %v", name, err)
		}
		t.Logf("cluster %s Available %s after the joins started", name, time.Since(joinStarted).Round(100*time.Millisecond))
		if !mc.Spec.Accepted {
			t.Errorf("cluster %s is Available but not accepted", name)
		}
	}
}

func TestGetClustersShowsNodesAndVersion(t *testing.T) {
	err := framework.Until(t.Context(), 30*time.Second, "musterctl get clusters to show both members", func(ctx context.Context) (bool, string, error) {
		// Columns named here, not the CRD's printer columns, which may change.
		out, err := muster.Musterctl(ctx, fleet.Hub, "get", "clusters", "-o",
			`custom-columns=NAME:.metadata.name,ACCEPTED:.spec.accepted,AVAILABLE:.status.conditions[?(@.type=="Available")].status,NODES:.status.nodes.ready,TOTAL:.status.nodes.total,VERSION:.status.version`)
		if err != nil {
			return false, "", err
		}
		for _, name := range joined {
			// The member's own count: other tests add nodes.
			var nodes corev1.NodeList
			if err := memberNamed(name).Client.List(ctx, &nodes); err != nil {
				return false, "", err
			}
			ready, err := framework.ReadyNodes(ctx, memberNamed(name))
			if err != nil {
				return false, "", err
			}
			want := []string{name, "true", "True", fmt.Sprint(ready), fmt.Sprint(len(nodes.Items)), "v1.36.3"}
			if !hasRow(out, want) {
				return false, fmt.Sprintf("no row %v in\n%s", want, out), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasRow reports whether a table has a row starting with the given cells.
func hasRow(table string, cells []string) bool {
	for _, line := range strings.Split(table, "\n") {
		fields := strings.Fields(line)
		if len(fields) >= len(cells) && slices.Equal(fields[:len(cells)], cells) {
			return true
		}
	}
	return false
}
