package app_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
)

// init --no-deploy installs the hub's namespace and policy, publishes cluster-info, and
// prints a join command that names this API server, pins its CA and carries a token the
// API server holds with the asked lifetime; run again, it succeeds and issues a new token.
func TestInitPrintsAJoinCommandForThisHub(t *testing.T) {
	certs, err := bootstrap.ParseCA(env.Config.CAData)
	if err != nil || len(certs) == 0 {
		t.Fatalf("envtest CA: %v", err)
	}
	joinLine := regexp.MustCompile(`(?m)^  musterctl join --hub-apiserver (\S+) --hub-token ([a-z0-9]{6})\.[a-z0-9]{16} --hub-ca-hash (\S+) --cluster-name <name>$`)
	var ids []string
	for range 2 {
		started := time.Now()
		r := musterctl("init", "--no-deploy", "--token-ttl", "30m")
		if r.code != 0 || !strings.HasPrefix(r.out, "✓ CRDs installed\n✓ namespace muster-system, RBAC and bootstrap policy installed\n") {
			t.Fatalf("init:\n%s", r)
		}
		if strings.Contains(r.out, "Deployment") {
			t.Errorf("init --no-deploy mentions a Deployment:\n%s", r.out)
		}
		m := joinLine.FindStringSubmatch(r.out)
		if m == nil {
			t.Fatalf("no join command in:\n%s", r.out)
		}
		if m[1] != env.Config.Host || m[3] != bootstrap.CAHash(certs[0]) {
			t.Errorf("join command names hub %s with CA %s, want %s with %s", m[1], m[3], env.Config.Host, bootstrap.CAHash(certs[0]))
		}
		ids = append(ids, m[2])
		var secret corev1.Secret
		if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + m[2]}, &secret); err != nil {
			t.Fatalf("the printed token has no Secret: %v", err)
		}
		expires, err := time.Parse(time.RFC3339, string(secret.Data["expiration"]))
		if err != nil {
			t.Fatalf("token expiration %q: %v", secret.Data["expiration"], err)
		}
		if lifetime := expires.Sub(started); lifetime < 29*time.Minute || lifetime > 31*time.Minute {
			t.Errorf("--token-ttl 30m made a token that expires in %s", lifetime)
		}
	}
	if ids[0] == ids[1] {
		t.Errorf("init run twice printed the same token %s", ids[0])
	}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Name: musterv1.HubNamespace}, &corev1.Namespace{}); err != nil {
		t.Errorf("namespace %s after init: %v", musterv1.HubNamespace, err)
	}
	err = env.Client.Get(t.Context(), client.ObjectKey{Namespace: musterv1.HubNamespace, Name: "muster-hub"}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("init --no-deploy: hub Deployment: %v, want NotFound", err)
	}
}

// init --hub-arg passes each flag to muster-hub in the Deployment, after the ones it always
// sets; a value with spaces or quotes stays one argument.
func TestInitPassesHubFlagsToTheDeployment(t *testing.T) {
	r := musterctl("init", "--image", "muster.local/muster-hub:test",
		"--hub-arg=--webhook-cert-validity=2m", "--hub-arg", `--reserved-namespaces=a "b" c`)
	if r.code != 0 {
		t.Fatalf("init:\n%s", r)
	}
	var d appsv1.Deployment
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: musterv1.HubNamespace, Name: "muster-hub"}, &d); err != nil {
		t.Fatal(err)
	}
	hub := d.Spec.Template.Spec.Containers[0]
	want := []string{"--leader-elect=true", "--webhook-cert-validity=2m", `--reserved-namespaces=a "b" c`}
	if !slices.Equal(hub.Args, want) || hub.Image != "muster.local/muster-hub:test" {
		t.Errorf("hub container runs %s with %q, want %q", hub.Image, hub.Args, want)
	}
	if err := env.Client.Delete(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
}

// upgrade hub applies this musterctl's CRDs and RBAC and rolls the Deployment to the new
// image, keeping the flags init added; without a Deployment it says the hub runs as a
// process. (envtest runs no Deployment controller: --wait=false.)
func TestUpgradeHubRollsTheDeploymentKeepingItsFlags(t *testing.T) {
	r := musterctl("upgrade", "hub", "--image", "muster.local/muster-hub:v2")
	if r.code == 0 || !strings.Contains(r.err, "no Deployment muster-system/muster-hub here: it runs as a process") {
		t.Fatalf("upgrade without a hub Deployment:\n%s", r)
	}
	if r := musterctl("init", "--image", "muster.local/muster-hub:v1", "--hub-arg=--webhook-cert-validity=2m"); r.code != 0 {
		t.Fatalf("init:\n%s", r)
	}
	// Scaled by hand since: the upgrade keeps the size.
	var scaled appsv1.Deployment
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: musterv1.HubNamespace, Name: "muster-hub"}, &scaled); err != nil {
		t.Fatal(err)
	}
	scaled.Spec.Replicas = ptr.To[int32](3)
	if err := env.Client.Update(t.Context(), &scaled); err != nil {
		t.Fatal(err)
	}
	r = musterctl("upgrade", "hub", "--image", "muster.local/muster-hub:v2", "--wait=false")
	if r.code != 0 || !hasLine(r.out, "✓ CRDs installed") || !hasLine(r.out, "✓ Deployment muster-system/muster-hub updated to muster.local/muster-hub:v2") {
		t.Fatalf("upgrade:\n%s", r)
	}
	var d appsv1.Deployment
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: musterv1.HubNamespace, Name: "muster-hub"}, &d); err != nil {
		t.Fatal(err)
	}
	hub := d.Spec.Template.Spec.Containers[0]
	if want := []string{"--leader-elect=true", "--webhook-cert-validity=2m"}; hub.Image != "muster.local/muster-hub:v2" || !slices.Equal(hub.Args, want) {
		t.Errorf("after the upgrade the hub runs %s with %q, want muster.local/muster-hub:v2 with %q", hub.Image, hub.Args, want)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("after the upgrade the hub has %v replicas, want the 3 it was scaled to", d.Spec.Replicas)
	}
	if err := env.Client.Delete(t.Context(), &d); err != nil {
		t.Fatal(err)
	}
}

// init --dry-run prints, in order, every object init applies (the CRDs first, the
// Deployment last, with the image and flags asked for) and changes nothing: no bootstrap
// token is made. -o json prints them as a List; another format is refused.
func TestInitDryRunPrintsWhatItWouldApply(t *testing.T) {
	var before corev1.SecretList
	if err := env.Client.List(t.Context(), &before, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		t.Fatal(err)
	}
	r := musterctl("init", "--dry-run", "-o", "yaml", "--image", "muster.local/muster-hub:dry", "--hub-arg=--webhook-cert-validity=2m")
	if r.code != 0 {
		t.Fatalf("init --dry-run:\n%s", r)
	}
	var kinds []string
	var deployment *appsv1.Deployment
	for _, doc := range strings.Split(r.out, "\n---\n") {
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.GetKind() == "" {
			t.Fatalf("a printed document is not an object (%v):\n%.300s", err, doc)
		}
		kinds = append(kinds, u.GetKind())
		if u.GetKind() == "Deployment" {
			deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, deployment); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want := []string{"PodDisruptionBudget", "Service", "Deployment"}; kinds[0] != "CustomResourceDefinition" || !slices.Equal(kinds[len(kinds)-3:], want) {
		t.Errorf("printed kinds %v: want the CRDs first and the Deployment's objects %v last", kinds, want)
	}
	if deployment == nil || deployment.Spec.Template.Spec.Containers[0].Image != "muster.local/muster-hub:dry" ||
		!slices.Contains(deployment.Spec.Template.Spec.Containers[0].Args, "--webhook-cert-validity=2m") {
		t.Errorf("printed Deployment %+v: want the image and flag asked for", deployment)
	}
	var after corev1.SecretList
	if err := env.Client.List(t.Context(), &after, client.InNamespace(metav1.NamespaceSystem)); err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != len(before.Items) {
		t.Errorf("init --dry-run made %d Secrets in kube-system, want none", len(after.Items)-len(before.Items))
	}

	r = musterctl("init", "--dry-run", "-o", "json", "--no-deploy")
	var list struct {
		Kind  string                      `json:"kind"`
		Items []unstructured.Unstructured `json:"items"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.out), &list) != nil || list.Kind != "List" || len(list.Items) != len(kinds)-3 {
		t.Errorf("init --dry-run -o json --no-deploy: want a List of every object but the Deployment, Service and PodDisruptionBudget (%d):\n%.300s", len(kinds)-3, r)
	}
	if r := musterctl("init", "--dry-run", "-o", "wide"); r.code == 0 || !strings.Contains(r.err, `--output "wide": must be yaml or json`) {
		t.Errorf("init --dry-run -o wide:\n%s", r)
	}
}
