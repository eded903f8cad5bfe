package worksync

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestNewFailures(t *testing.T) {
	refused := func(ordinal int32, msg string) musterv1.ManifestStatus {
		return musterv1.ManifestStatus{Ordinal: ordinal, Conditions: []metav1.Condition{{Type: musterv1.WorkApplied, Status: metav1.ConditionFalse, Message: msg}}}
	}
	applied := musterv1.ManifestStatus{Ordinal: 0, Conditions: []metav1.Condition{{Type: musterv1.WorkApplied, Status: metav1.ConditionTrue}}}
	quota := errors.New("exceeded quota")
	for _, tc := range []struct {
		name     string
		reported []musterv1.ManifestStatus
		outcomes []outcome
		want     []int
	}{
		{"nothing failed", nil, []outcome{{ordinal: 0}}, nil},
		{"first failure", nil, []outcome{{ordinal: 0, err: quota}}, []int{0}},
		{"applied before, fails now", []musterv1.ManifestStatus{applied}, []outcome{{ordinal: 0, err: quota}}, []int{0}},
		{"same failure reported", []musterv1.ManifestStatus{refused(0, "exceeded quota")}, []outcome{{ordinal: 0, err: quota}}, nil},
		{"another message", []musterv1.ManifestStatus{refused(0, "forbidden")}, []outcome{{ordinal: 0, err: quota}}, []int{0}},
		{"only the new one of two", []musterv1.ManifestStatus{refused(0, "exceeded quota")}, []outcome{{ordinal: 0, err: quota}, {ordinal: 1, err: quota}}, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for _, o := range newFailures(tc.reported, tc.outcomes) {
				got = append(got, o.ordinal)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("newFailures = %v, want %v", got, tc.want)
			}
		})
	}
}
