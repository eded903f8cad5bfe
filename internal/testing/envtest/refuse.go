package envtest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// RefuseStatusWrites makes the API server refuse, as invalid (422) with message, every
// update of the status of resource (a plural name, such as "jobs") in group within
// namespace, until the test ends: a controller's status writes then fail as they do when
// it computes a status the API server's rules refuse. It is a ValidatingAdmissionPolicy,
// which the API server enforces a moment after its creation (long after it, on a loaded
// machine): the policy refuses updates of a probe ConfigMap too, and this call returns
// once the probe's update is refused, so the test's first status write meets the policy.
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
				}}, {RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}, ResourceNames: []string{probeName}}},
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
	e.waitForRefusal(t, namespace)
}

// probeName is the ConfigMap whose refused update shows a RefuseStatusWrites policy applies.
const probeName = "refuse-status-writes-probe"

// waitForRefusal updates a probe ConfigMap in namespace until the API server refuses it.
func (e *Environment) waitForRefusal(t *testing.T, namespace string) {
	t.Helper()
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: probeName, Namespace: namespace}}
	if err := e.Client.Create(t.Context(), probe); err != nil {
		t.Fatalf("creating the policy's probe: %v", err)
	}
	n := 0
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		n++
		probe.Data = map[string]string{"try": strconv.Itoa(n)}
		err := e.Client.Update(ctx, probe)
		if apierrors.IsConflict(err) {
			return false, e.Client.Get(ctx, client.ObjectKeyFromObject(probe), probe)
		}
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err), nil
	})
	if err != nil {
		t.Fatalf("the status-refusing policy in %s never applied: %v", namespace, err)
	}
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
	n, _ := Sample(family, labels)
	return n
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ExpectPacedRefusals checks a controller's pacing of status writes the API server refuses
// as invalid (see RefuseStatusWrites), for the object named name in namespace. change
// brings the object back to its controller for a round that writes status. It calls change
// until the first refusal is announced (a StatusWriteRefused event), then every 100 ms for
// 10 s. writes selects the refused writes in apiserver_request_total (resource,
// subresource, verb, code). The backoff (1 s, 2 s, 4 s…) allows 4 of them in 10 s, and
// one more for timing; the series is announced once.
func (e *Environment) ExpectPacedRefusals(t *testing.T, namespace, name string, writes map[string]string, change func()) {
	t.Helper()
	Eventually(t, "a refused status write announced", func() (bool, string) {
		change()
		reasons, err := e.EventReasons(namespace, name)
		return err == nil && slices.Contains(reasons, musterv1.ReasonStatusWriteRefused), fmt.Sprint(reasons, err)
	})
	start := e.APIRequests(t, writes)
	window := 10 * time.Second
	for end := time.Now().Add(window); time.Now().Before(end); {
		change()
		time.Sleep(100 * time.Millisecond)
	}
	if attempts := e.APIRequests(t, writes) - start; attempts > 5 {
		t.Errorf("%v status writes refused as invalid in %v: want at most 5", attempts, window)
	}
	reasons, err := e.EventReasons(namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(slices.DeleteFunc(reasons, func(r string) bool { return r != musterv1.ReasonStatusWriteRefused })); n != 1 {
		t.Errorf("%d %s events, want one for the series of refusals (%v)", n, musterv1.ReasonStatusWriteRefused, reasons)
	}
}
