package monitoring_test

import (
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/musterhq/muster/deploy/charts"
	"github.com/musterhq/muster/deploy/monitoring"
)

// Each PodMonitor decodes strictly with the Prometheus Operator's types and scrapes what
// the Deployment of the chart (what `musterctl init`/`join` install) really serves: it selects the
// Deployment's pods, in its namespace, on a container port of that name.
func TestPodMonitorsScrapeTheDeployedPods(t *testing.T) {
	for file, deployment := range map[string]string{
		"podmonitor-hub.yaml":   charts.Hub,
		"podmonitor-agent.yaml": charts.Agent,
	} {
		t.Run(file, func(t *testing.T) {
			raw, err := monitoring.FS.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var pm monitoringv1.PodMonitor
			if err := yaml.UnmarshalStrict(raw, &pm); err != nil {
				t.Fatalf("decoding %s: %v", file, err)
			}
			d := deploymentIn(t, deployment)
			if !pm.Spec.NamespaceSelector.Any && (len(pm.Spec.NamespaceSelector.MatchNames) != 1 || pm.Spec.NamespaceSelector.MatchNames[0] != d.Namespace) {
				t.Errorf("%s selects namespaces %v, the Deployment runs in %s", file, pm.Spec.NamespaceSelector.MatchNames, d.Namespace)
			}
			selector, err := podSelector(pm)
			if err != nil {
				t.Fatal(err)
			}
			if !selector.Matches(labels.Set(d.Spec.Template.Labels)) {
				t.Errorf("%s selects %v, the pods are labelled %v", file, selector, d.Spec.Template.Labels)
			}
			if got := d.Spec.Template.Labels[pm.Spec.JobLabel]; got == "" {
				t.Errorf("%s takes job from label %q, which the pods lack", file, pm.Spec.JobLabel)
			}
			for _, ep := range pm.Spec.PodMetricsEndpoints {
				if !servesPort(d, ptrValue(ep.Port)) {
					t.Errorf("%s scrapes port %q, which no container of %s names", file, ptrValue(ep.Port), d.Name)
				}
			}
		})
	}
}

// deploymentIn renders the chart with its defaults and returns its Deployment.
func deploymentIn(t *testing.T, chart string) *appsv1.Deployment {
	t.Helper()
	objs, err := charts.Render(chart, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			return &d
		}
	}
	t.Fatalf("chart %s has no Deployment", chart)
	return nil
}

func podSelector(pm monitoringv1.PodMonitor) (labels.Selector, error) {
	return labels.ValidatedSelectorFromSet(pm.Spec.Selector.MatchLabels)
}

func servesPort(d *appsv1.Deployment, name string) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func ptrValue(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
