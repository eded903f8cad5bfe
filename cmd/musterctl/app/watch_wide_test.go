package app_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// setWidget changes a widget's spec field to value.
func setWidget(t *testing.T, ns, name, field, value string) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("test.muster.dev/v1")
	u.SetKind("Widget")
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, value, "spec", field); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(t.Context(), u); err != nil {
		t.Fatal(err)
	}
}

// A change in a column only -o wide shows prints a row in the wide watch and none in the
// default one; a change in a shown column prints in both.
func TestWatchPrintsWhatItsColumnsShow(t *testing.T) {
	ns := env.Namespace(t)
	sampleWidget(t, ns, "w1", "small", "red")
	narrow := startWatch(t, "get", "widgets", "-n", ns, "-w")
	wide := startWatch(t, "get", "widgets", "-n", ns, "-w", "-o", "wide")
	narrow.waitRows(t, 1)
	wide.waitRows(t, 1)

	setWidget(t, ns, "w1", "color", "blue")
	wide.waitRows(t, 2)
	setWidget(t, ns, "w1", "size", "big")
	// Events come in order: once the narrow watch shows the size, it has seen the colour.
	narrow.waitRows(t, 2)
	wide.waitRows(t, 3)
	if got := narrow.rows(); len(got) != 2 || !strings.HasPrefix(got[0], "w1 small") || !strings.HasPrefix(got[1], "w1 big") {
		t.Errorf("default watch rows %q, want the first state and the new size only", got)
	}
	want := []string{"w1 small red", "w1 small blue", "w1 big blue"}
	got := wide.rows()
	if len(got) != len(want) {
		t.Fatalf("wide watch rows %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("wide watch row %d = %q, want it to start with %q", i, got[i], want[i])
		}
	}
}

// Watching every namespace shows the namespace column, and objects of each namespace.
func TestWatchAllNamespaces(t *testing.T) {
	ns := env.Namespace(t)
	other := ns + "-b"
	createNamespace(t, other)
	label := uniqueName("watchall")
	fleetJob(t, ns, "one", map[string]string{"batch": label})
	w := startWatch(t, "get", "fj", "-A", "-l", "batch="+label, "-w")
	envtest.Eventually(t, "the first row", func() (bool, string) {
		return hasLine(w.out.String(), ns+" one Divided"), w.out.String() + w.err.String()
	})
	if !hasLine(w.out.String(), "NAMESPACE NAME MODE") {
		t.Errorf("watch -A header:\n%s", w.out.String())
	}
	fleetJob(t, other, "two", map[string]string{"batch": label})
	fleetJob(t, other, "unlabelled", nil)
	envtest.Eventually(t, "the second namespace's job", func() (bool, string) {
		return hasLine(w.out.String(), other+" two Divided"), w.out.String()
	})
	if strings.Contains(w.out.String(), "unlabelled") {
		t.Errorf("the watch shows a job its selector leaves out:\n%s", w.out.String())
	}
}

// Every failed object of a get is reported on its own line, the found ones still shown.
func TestGetReportsEachMissingObject(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "here", nil)
	r := musterctl("get", "fj", "gone-1", "here", "gone-2", "-n", ns, "-o", "name")
	wantErr := `Error from server (NotFound): fleetjobs.muster.dev "gone-1" not found` + "\n" +
		`Error from server (NotFound): fleetjobs.muster.dev "gone-2" not found` + "\n"
	if r.code != 1 || r.out != "fleetjob.muster.dev/here\n" || r.err != wantErr {
		t.Errorf("get of two missing and one present:\n%s", r)
	}
}

// The root help lists every command, as musterctl or as the kubectl plugin.
func TestHelpListsEveryCommand(t *testing.T) {
	r := musterctl("--help")
	if r.code != 0 || !strings.HasPrefix(r.out, "Run batch work across a fleet of Kubernetes clusters") {
		t.Fatalf("--help:\n%s", r)
	}
	for _, c := range []string{"accept", "dashboard", "deny", "describe", "get", "init", "join", "token", "unjoin", "version"} {
		if !hasLine(r.out, c+" ") {
			t.Errorf("--help does not list %s:\n%s", c, r.out)
		}
	}
	var out, errOut strings.Builder
	if code := appRunAsPlugin(&out, &errOut, "describe", "--help"); code != 0 || !strings.Contains(out.String(), "Usage:\n  kubectl muster describe KIND NAME [flags]") {
		t.Errorf("kubectl-muster describe --help: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if r := musterctl("token"); r.code != 0 || !hasLine(r.out, "create ") || !hasLine(r.out, "delete ") || !hasLine(r.out, "list ") {
		t.Errorf("token without a subcommand shows no help:\n%s", r)
	}
}
