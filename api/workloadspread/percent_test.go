package workloadspread_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

// TestPercent: only a whole percent written plainly is one, as the CRD's pattern says.
func TestPercent(t *testing.T) {
	for in, want := range map[string]int{"0%": 0, "7%": 7, "100%": 100, "101%": -1, "-1%": -1, "07%": -1, "+5%": -1,
		"5": -1, "5 %": -1, "%": -1, "12.5%": -1, "": -1} {
		got, err := workloadspread.Percent(intstr.FromString(in))
		if want < 0 && err == nil || want >= 0 && (err != nil || got != want) {
			t.Errorf("Percent(%q) = %d, %v; want %d (-1: an error)", in, got, err, want)
		}
	}
}

// TestOnlyLiveSpreadsOfTheNamespaceClaimATarget: a spread being deleted, or one in another
// namespace, does not hold the target.
func TestOnlyLiveSpreadsOfTheNamespaceClaimATarget(t *testing.T) {
	ws := spread(subset("a", nil))
	deleting := *spread(subset("a", nil))
	deleting.Name, deleting.DeletionTimestamp = "old", &metav1.Time{}
	elsewhere := *spread(subset("a", nil))
	elsewhere.Name, elsewhere.Namespace = "other", "ns2"
	retargeted := *spread(subset("a", nil))
	retargeted.Name, retargeted.Spec.TargetReference.Name = "other", "job2"
	if errs := workloadspread.Validate(ws, []musterv1.WorkloadSpread{deleting, elsewhere, retargeted}); len(errs) > 0 {
		t.Errorf("Validate() = %v, want no error", errs)
	}
}
