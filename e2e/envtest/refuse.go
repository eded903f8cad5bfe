package envtest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/e2e/framework"
)

// RefuseStatusWrites makes the API server refuse, as invalid (422) with message, every
// update of the status of resource (a plural name, such as "jobs") in group within
// namespace, until the test ends: a controller's status writes then fail as they do when
// it computes a status the API server's rules refuse. It is a ValidatingAdmissionPolicy,
// which the API server enforces a moment after its creation: wait for its first refusal,
// not for this call.
func (e *Environment) RefuseStatusWrites(t *testing.T, namespace, group, resource, message string) {
	t.Helper()
	name := "refuse-" + namespace
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule: admissionregistrationv1.Rule{
						APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource + "/status"},
					},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "false", Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	for _, obj := range []client.Object{policy, binding} {
		if err := e.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, name, err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = e.Client.Delete(ctx, binding)
		_ = e.Client.Delete(ctx, policy)
	})
}

// APIRequests is the API server's count of requests (apiserver_request_total) whose
// labels include labels: verb, resource, subresource, code... It counts every client of
// the server since it started.
func (e *Environment) APIRequests(t *testing.T, labels map[string]string) float64 {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parsing the API server's metrics: %v", err)
	}
	family := families["apiserver_request_total"]
	if family == nil {
		t.Fatalf("the API server exports no apiserver_request_total; it has %s", strings.Join(keys(families), ","))
	}
	n, _ := framework.Sample(family, labels)
	return n
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
