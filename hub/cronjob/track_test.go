package cronjob

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestLeftActive(t *testing.T) {
	run := func(name string, finished bool) child {
		return child{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name)}}, finished: finished}
	}
	ref := func(name string) corev1.ObjectReference {
		return corev1.ObjectReference{Name: name, UID: types.UID(name)}
	}
	for _, tc := range []struct {
		name              string
		active            []corev1.ObjectReference
		children          []child
		finished, missing []string
	}{
		{"nothing listed", nil, []child{run("a", true)}, nil, nil},
		{"still running", []corev1.ObjectReference{ref("a")}, []child{run("a", false)}, nil, nil},
		{"finished since", []corev1.ObjectReference{ref("a"), ref("b")}, []child{run("a", true), run("b", false)}, []string{"a"}, nil},
		{"gone", []corev1.ObjectReference{ref("a"), ref("b")}, []child{run("b", false)}, nil, []string{"a"}},
		{"a new run of the same name is another run", []corev1.ObjectReference{ref("a")},
			[]child{{obj: &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "a2"}}}}, nil, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			finished, missing := leftActive(tc.active, tc.children)
			var gotFinished, gotMissing []string
			for _, c := range finished {
				gotFinished = append(gotFinished, c.obj.GetName())
			}
			for _, r := range missing {
				gotMissing = append(gotMissing, r.Name)
			}
			if !slices.Equal(gotFinished, tc.finished) || !slices.Equal(gotMissing, tc.missing) {
				t.Errorf("finished %v missing %v, want %v %v", gotFinished, gotMissing, tc.finished, tc.missing)
			}
		})
	}
}
