package podcontrol_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/expectations"
	"github.com/musterhq/muster/agent/podcontrol"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// kind labels this package's pod metrics, apart from the controllers'.
const kind = "PodControlTest"

var env *envtest.Environment

// TestMain starts a real API server; the tests write pods through Control and read them
// back directly, playing the cache.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(ctrl.Manager) error { return nil }))
}

// fixture is one test's namespace, owner and Control.
type fixture struct {
	t       *testing.T
	ns      string
	owner   *corev1.ConfigMap
	control podcontrol.Control
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
	if err := env.Client.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	exp := expectations.New(time.Minute, time.Now)
	return &fixture{t: t, ns: ns, owner: owner, control: podcontrol.Control{Client: env.Client, Expectations: exp, Kind: kind}}
}

// pod builds a pod of the fixture's namespace labelled app=test; controlled makes the
// owner its controller.
func (f *fixture) pod(name string, controlled bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{"app": "test"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if controlled {
		p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(f.owner, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
	}
	return p
}

// create stores pods directly, as someone else would.
func (f *fixture) create(pods ...*corev1.Pod) {
	f.t.Helper()
	for _, p := range pods {
		if err := env.Client.Create(f.t.Context(), p); err != nil {
			f.t.Fatal(err)
		}
	}
}

// stored lists the namespace's pods by name, as an up-to-date cache would show them.
func (f *fixture) stored() map[string]*corev1.Pod {
	f.t.Helper()
	var list corev1.PodList
	if err := env.Client.List(f.t.Context(), &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	pods := map[string]*corev1.Pod{}
	for i := range list.Items {
		pods[list.Items[i].Name] = &list.Items[i]
	}
	return pods
}

// satisfied asks the owner's expectations whether the named stored pods reflect every
// write.
func (f *fixture) satisfied(names ...string) bool {
	f.t.Helper()
	stored := f.stored()
	var pods []*corev1.Pod
	for _, n := range names {
		if p, ok := stored[n]; ok {
			pods = append(pods, p)
		}
	}
	return f.control.Expectations.Satisfied(client.ObjectKeyFromObject(f.owner), pods)
}

func names(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

func podName(i int) string { return fmt.Sprintf("p-%d", i) }
