package charts_test

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/musterhq/muster/deploy/charts"
)

// kindNames lists objs as Kind/name, in order.
func kindNames(objs charts.Objects) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func find(objs charts.Objects, kindName string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind()+"/"+o.GetName() == kindName {
			return o.Unstructured
		}
	}
	return nil
}

var join = map[string]any{
	"clusterName": "member1",
	"hub":         map[string]any{"url": "https://hub.example:6443", "caHash": "sha256:" + strings.Repeat("ab", 32)},
	"bootstrap":   map[string]any{"token": "abcdef.0123456789abcdef"},
}

// What each value changes in what is installed, as an operator reading values.yaml
// expects.
func TestValuesShapeTheRelease(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chart  string
		values map[string]any
		want   []string // Kind/name present
		absent []string // Kind/name absent
		check  func(t *testing.T, objs charts.Objects)
	}{
		{
			name: "hub defaults: two replicas kept up by a budget, CRDs kept on uninstall", chart: charts.Hub,
			want: []string{"Namespace/muster-system", "PodDisruptionBudget/muster-hub", "Deployment/muster-hub", "CustomResourceDefinition/fleetjobs.muster.dev"},
			check: func(t *testing.T, objs charts.Objects) {
				d := find(objs, "Deployment/muster-hub")
				if r, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); r != 2 {
					t.Errorf("replicas = %d, want 2", r)
				}
				if img := container(t, d)["image"]; img != "muster-hub:v0.1.0" {
					t.Errorf("image = %v, want the chart's appVersion as tag", img)
				}
				for _, o := range objs {
					if o.GetKind() == "CustomResourceDefinition" && o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
						t.Errorf("CRD %s is not kept on uninstall", o.GetName())
					}
				}
			},
		},
		{
			name: "a memory limit is the hub's soft memory limit too", chart: charts.Hub,
			values: map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": "4Gi"}}},
			check: func(t *testing.T, objs charts.Objects) {
				if got := goMemLimit(t, find(objs, "Deployment/muster-hub")); got != "limits.memory" {
					t.Errorf("GOMEMLIMIT comes from %q, want the container's limits.memory", got)
				}
			},
		},
		{
			name: "without a memory limit the runtime keeps its default", chart: charts.Hub,
			values: map[string]any{"resources": map[string]any{"limits": map[string]any{"cpu": "1"}}},
			check: func(t *testing.T, objs charts.Objects) {
				if got := goMemLimit(t, find(objs, "Deployment/muster-hub")); got != "" {
					t.Errorf("GOMEMLIMIT set from %q without a memory limit", got)
				}
			},
		},
		{
			name: "one replica has no budget, which would block every drain", chart: charts.Hub,
			values: map[string]any{"replicas": 1},
			want:   []string{"Deployment/muster-hub"}, absent: []string{"PodDisruptionBudget/muster-hub"},
		},
		{
			name: "CRDs left out, namespace made elsewhere", chart: charts.Hub,
			values: map[string]any{"crds": map[string]any{"install": false}, "namespace": map[string]any{"create": false}},
			want:   []string{"Deployment/muster-hub"}, absent: []string{"CustomResourceDefinition/fleetjobs.muster.dev", "Namespace/muster-system"},
		},
		{
			name: "CRDs deleted on uninstall when asked", chart: charts.Hub,
			values: map[string]any{"crds": map[string]any{"keep": false}},
			check: func(t *testing.T, objs charts.Objects) {
				if a := find(objs, "CustomResourceDefinition/works.muster.dev").GetAnnotations(); a["helm.sh/resource-policy"] != "" {
					t.Errorf("annotations %v, want no resource policy", a)
				}
			},
		},
		{
			name: "image by digest, flags, Pod Security default and scheduling", chart: charts.Hub,
			values: map[string]any{
				"image":        map[string]any{"repository": "registry.example:5000/muster-hub", "digest": "sha256:" + strings.Repeat("0", 64)},
				"extraArgs":    []any{"--webhook-cert-validity=2160h"},
				"podSecurity":  map[string]any{"defaultLevel": "restricted"},
				"nodeSelector": map[string]any{"disk": "ssd"},
				"tolerations":  []any{map[string]any{"operator": "Exists"}},
			},
			check: func(t *testing.T, objs charts.Objects) {
				d := find(objs, "Deployment/muster-hub")
				c := container(t, d)
				if c["image"] != "registry.example:5000/muster-hub@sha256:"+strings.Repeat("0", 64) {
					t.Errorf("image = %v", c["image"])
				}
				args, _, _ := unstructured.NestedStringSlice(c, "args")
				if want := []string{"--leader-elect=true", "--default-pod-security-level=restricted", "--webhook-cert-validity=2160h"}; !slices.Equal(args, want) {
					t.Errorf("args = %v, want %v", args, want)
				}
				if sel, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "spec", "nodeSelector"); sel["disk"] != "ssd" {
					t.Errorf("nodeSelector = %v", sel)
				}
				if tol, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "tolerations"); len(tol) != 1 {
					t.Errorf("tolerations = %v", tol)
				}
			},
		},
		{
			name: "agent without a join line: no bootstrap Secret", chart: charts.Agent,
			want:   []string{"Namespace/muster-agent", "Deployment/muster-agent", "CustomResourceDefinition/broadcastjobs.muster.dev", "ClusterRoleBinding/muster-work-executor-admin"},
			absent: []string{"Secret/muster-bootstrap", "CustomResourceDefinition/fleetjobs.muster.dev"},
		},
		{
			name: "agent with a join line pinned by hash, and extra executor roles once each", chart: charts.Agent,
			values: merge(join, map[string]any{"workExecutorRoles": []any{"cluster-admin", "crd-installer", "cluster-admin"}}),
			want:   []string{"Secret/muster-bootstrap", "ClusterRoleBinding/muster-work-executor:cluster-admin", "ClusterRoleBinding/muster-work-executor:crd-installer"},
			check: func(t *testing.T, objs charts.Objects) {
				secret := find(objs, "Secret/muster-bootstrap")
				encoded, _, _ := unstructured.NestedStringMap(secret.Object, "data")
				data := map[string]string{}
				for k, v := range encoded {
					raw, err := base64.StdEncoding.DecodeString(v)
					if err != nil {
						t.Fatal(err)
					}
					data[k] = string(raw)
				}
				want := map[string]string{"hub-url": "https://hub.example:6443", "ca-hash": "sha256:" + strings.Repeat("ab", 32), "token": "abcdef.0123456789abcdef", "cluster-name": "member1"}
				if !equalMaps(data, want) {
					t.Errorf("bootstrap Secret = %v, want %v", data, want)
				}
				if secret.GetAnnotations()["muster.dev/keep-join-line"] != "true" {
					t.Errorf("bootstrap Secret annotations %v, want it kept (the chart's default)", secret.GetAnnotations())
				}
				if n := len(kindNames(objs.From("templates/executor.yaml"))); n != 6 {
					t.Errorf("executor.yaml made %d objects, want its 4 and 2 role bindings", n)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := charts.Render(tc.chart, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			got := kindNames(objs)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("no %s among %v", w, got)
				}
			}
			for _, a := range tc.absent {
				if slices.Contains(got, a) {
					t.Errorf("%s made, want none", a)
				}
			}
			if tc.check != nil {
				tc.check(t, objs)
			}
		})
	}
}

// A wrong value is refused when rendering, naming it, before anything is applied.
func TestBadValuesAreRefusedByName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		chart   string
		values  map[string]any
		wantErr string
	}{
		{"unknown value", charts.Hub, map[string]any{"replica": 3}, "additional properties 'replica' not allowed"},
		{"no replica", charts.Hub, map[string]any{"replicas": 0}, "/replicas"},
		{"a flag that is not one", charts.Hub, map[string]any{"extraArgs": []any{"webhook-cert-validity=1h"}}, "/extraArgs/0"},
		{"Pod Security level", charts.Hub, map[string]any{"podSecurity": map[string]any{"defaultLevel": "strict"}}, "/podSecurity/defaultLevel"},
		{"malformed token", charts.Agent, merge(join, map[string]any{"bootstrap": map[string]any{"token": "secret"}}), "/bootstrap/token"},
		{"token without hub", charts.Agent, map[string]any{"clusterName": "m", "bootstrap": map[string]any{"token": "abcdef.0123456789abcdef"}}, "hub.url must be"},
		{"token without a CA", charts.Agent, merge(join, map[string]any{"hub": map[string]any{"url": "https://hub:6443"}}), "hub.caHash must be"},
		{"token without a name", charts.Agent, merge(join, map[string]any{"clusterName": ""}), "clusterName must be"},
		{"plain http hub", charts.Agent, merge(join, map[string]any{"hub": map[string]any{"url": "http://hub:6443"}}), "/hub/url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := charts.Render(tc.chart, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func container(t *testing.T, d *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	return cs[0].(map[string]any)
}

func merge(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// goMemLimit is the resource the hub container's GOMEMLIMIT comes from, or "".
func goMemLimit(t *testing.T, d *unstructured.Unstructured) string {
	t.Helper()
	env, _, _ := unstructured.NestedSlice(container(t, d), "env")
	for _, e := range env {
		e, _ := e.(map[string]any)
		if e["name"] == "GOMEMLIMIT" {
			res, _, _ := unstructured.NestedString(e, "valueFrom", "resourceFieldRef", "resource")
			return res
		}
	}
	return ""
}
