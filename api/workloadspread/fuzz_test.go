package workloadspread_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/musterhq/muster/api/workloadspread"
)

// FuzzValidateAndInject: any patch bytes and caps are judged without panicking, and a
// patch that passes is one Inject applies to a pod template: Validate promises the
// webhook admits no spread whose subsets the hub then cannot shape.
func FuzzValidateAndInject(f *testing.F) {
	f.Add([]byte(`{"metadata":{"labels":{"a":"b"}}}`), "50%", "3")
	f.Add([]byte(`{"spec":{"containers":"x"}}`), "101%", "-1")
	f.Add([]byte(`{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"-1"}}}]}}`), "x", "0")
	f.Add([]byte(`[`), "", "")
	f.Fuzz(func(t *testing.T, patch []byte, max1, max2 string) {
		a, b := subset("a", nil), subset("b", nil)
		if max1 != "" {
			a.MaxReplicas = ptrTo(intstr.Parse(max1))
		}
		if max2 != "" {
			b.MaxReplicas = ptrTo(intstr.Parse(max2))
		}
		a.Patch = &runtime.RawExtension{Raw: patch}
		ws := spread(a, b)
		if errs := workloadspread.Validate(ws, nil); len(errs) > 0 {
			return
		}
		tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
		if _, err := workloadspread.Inject(tmpl, &ws.Spec.Subsets[0]); err != nil {
			t.Fatalf("Validate admitted patch %q, which Inject cannot apply: %v", patch, err)
		}
	})
}

func ptrTo[T any](v T) *T { return &v }
