package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// installWidgetCRD installs a test kind whose Color column has priority 1: the API server
// leaves it out of the default table and -o wide shows it, the mechanism Muster's own
// kinds use for their wide columns.
func installWidgetCRD(ctx context.Context) error {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.muster.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.muster.dev",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true),
				}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Size", Type: "string", JSONPath: ".spec.size"},
					{Name: "Color", Type: "string", JSONPath: ".spec.color", Priority: 1},
				},
			}},
		},
	}
	if err := env.Client.Create(ctx, crd); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var got apiextensionsv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), &got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// sample creates deploy/samples/<file>.yaml in namespace ns under name (cluster-scoped
// samples ignore ns).
func sample(t *testing.T, file, ns, name string) *unstructured.Unstructured {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "samples", file+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatal(err)
	}
	if u.GetNamespace() != "" {
		u.SetNamespace(ns)
	}
	u.SetName(name)
	create(t, u)
	return u
}

// fleetJob creates a FleetJob of two completions in ns.
func fleetJob(t *testing.T, ns, name string, labels map[string]string) *musterv1.FleetJob {
	t.Helper()
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Completions: new(int32(2)),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}},
			}},
		},
	}
	create(t, fj)
	return fj
}

// setStatus writes fj's status as change leaves it.
func setStatus(t *testing.T, fj *musterv1.FleetJob, change func(*musterv1.FleetJobStatus)) {
	t.Helper()
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), fj); err != nil {
		t.Fatal(err)
	}
	change(&fj.Status)
	if err := env.Client.Status().Update(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
}

func condition(t, reason, message string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
}

// memberNamespace creates the hub namespace of a member cluster named after the test.
func memberNamespace(t *testing.T, cluster string) string {
	t.Helper()
	ns := musterv1.MemberNamespace(cluster)
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	return ns
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000)
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func sampleWidget(t *testing.T, ns, name, size, color string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.muster.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"size": size, "color": color},
	}}
	create(t, u)
}
