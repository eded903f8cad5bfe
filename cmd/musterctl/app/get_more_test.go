package app_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// The wide table of each Muster kind adds its priority columns after the default ones.
func TestGetWideColumnsOfMustersKinds(t *testing.T) {
	ns := env.Namespace(t)
	cluster := uniqueName("wide")
	fleetJob(t, ns, "fj", nil)
	sample(t, "broadcastjob", ns, "bcj")
	sample(t, "membercluster", "", cluster)
	for _, c := range []struct {
		args           []string
		narrow, wide   string
		wideOnlyColumn string
	}{
		{[]string{"fj", "-n", ns}, "NAME MODE COMPLETIONS ACTIVE SUCCEEDED FAILED CLUSTERS PHASE AGE", "NAME MODE COMPLETIONS ACTIVE SUCCEEDED FAILED CLUSTERS PHASE AGE READY SHARD FAILURE STARTED", "SHARD FAILURE"},
		{[]string{"bcj", "-n", ns}, "NAME DESIRED ACTIVE SUCCEEDED FAILED PHASE AGE", "NAME DESIRED ACTIVE SUCCEEDED FAILED PHASE AGE PARALLELISM COMPLETION FAILURE PAUSED", "PAUSED"},
		{[]string{"clusters", cluster}, "NAME ACCEPTED AVAILABLE READY NODES VERSION AGE", "NAME ACCEPTED AVAILABLE READY NODES VERSION AGE JOINED SCHEDULABLE REASON AGENT AGENT-SUPPORTED", "SCHEDULABLE"},
	} {
		narrow := musterctl(append([]string{"get"}, c.args...)...)
		wide := musterctl(append([]string{"get", "-o", "wide"}, c.args...)...)
		if narrow.code != 0 || fields(narrow.out)[0] != c.narrow || strings.Contains(narrow.out, c.wideOnlyColumn) {
			t.Errorf("get %v: header %q, want %q:\n%s", c.args, fields(narrow.out)[0], c.narrow, narrow)
		}
		if wide.code != 0 || fields(wide.out)[0] != c.wide {
			t.Errorf("get %v -o wide: header %q, want %q:\n%s", c.args, fields(wide.out)[0], c.wide, wide)
		}
	}
}

// Objects named in kind/name form may mix kinds; each kind gets its own table.
func TestGetByKindSlashName(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "a", nil)
	fleetJob(t, ns, "b", nil)
	sample(t, "broadcastjob", ns, "c")

	r := musterctl("get", "fj/a", "fj/b", "-n", ns, "-o", "name")
	if r.code != 0 || r.out != "fleetjob.muster.dev/a\nfleetjob.muster.dev/b\n" {
		t.Errorf("get fj/a fj/b -o name:\n%s", r)
	}
	r = musterctl("get", "fj/a", "bcj/c", "-n", ns)
	if r.code != 0 || !hasLine(r.out, "fleetjob.muster.dev/a ") || !hasLine(r.out, "broadcastjob.muster.dev/c ") || strings.Contains(r.out, "/b ") {
		t.Errorf("get fj/a bcj/c:\n%s", r)
	}
	if n := strings.Count(r.out, "NAME "); n != 2 {
		t.Errorf("get fj/a bcj/c printed %d headers, want one per kind:\n%s", n, r.out)
	}
	// Two named objects in yaml are a List; one is the object itself.
	r = musterctl("get", "fj", "a", "b", "-n", ns, "-o", "yaml")
	if r.code != 0 || !strings.HasPrefix(r.out, "apiVersion: v1\nitems:\n") || !strings.Contains(r.out, "kind: List") {
		t.Errorf("get fj a b -o yaml:\n%s", r)
	}
	r = musterctl("get", "fj/a", "-n", ns, "-o", "yaml")
	if r.code != 0 || !strings.HasPrefix(r.out, "apiVersion: muster.dev/v1alpha1\nkind: FleetJob\n") {
		t.Errorf("get fj/a -o yaml:\n%s", r)
	}
}

func TestGetClusterScopedKindsIgnoreTheNamespace(t *testing.T) {
	cluster := uniqueName("scoped")
	sample(t, "membercluster", "", cluster)
	for _, args := range [][]string{{"clusters", cluster, "-o", "name"}, {"mc", cluster, "-n", "elsewhere", "-o", "name"}, {"cluster/" + cluster, "-o", "name"}} {
		r := musterctl(append([]string{"get"}, args...)...)
		if r.code != 0 || r.out != "membercluster.muster.dev/"+cluster+"\n" {
			t.Errorf("get %v:\n%s", args, r)
		}
	}
}

func TestGetOutputErrors(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "a", nil)
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-o", "jsonpath={.metadata.name"}, "error: error parsing jsonpath {.metadata.name, unclosed action"},
		{[]string{"-o", "custom-columns="}, "custom-columns format specified but no custom columns given"},
		{[]string{"-o", "go-template={{.nope"}, "error: error parsing template {{.nope"},
		{[]string{"-l", "team in (a"}, "unable to parse requirement"},
		{[]string{"--sort-by", "{.metadata.nope", "-o", "name"}, "error: "},
	} {
		r := musterctl(append([]string{"get", "fj", "-n", ns}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.err, c.stderr) {
			t.Errorf("get fj %v: want exit 1 and %q:\n%s", c.args, c.stderr, r)
		}
	}
}

func TestGetAllNamespacesWithNothing(t *testing.T) {
	r := musterctl("get", "fj", "-A", "-l", "nothing-has="+uniqueName("label"))
	if r.code != 0 || r.out != "" || strings.TrimSpace(r.err) != "No resources found" {
		t.Errorf("get -A of nothing:\n%s", r)
	}
	r = musterctl("get", "fj", "-A", "-l", "nothing-has=x", "-o", "name")
	if r.code != 0 || r.out != "" {
		t.Errorf("get -A -o name of nothing:\n%s", r)
	}
}

// A watch follows one kind; it refuses several, and a kind/name it cannot follow.
func TestWatchRefusesSeveralKinds(t *testing.T) {
	ns := env.Namespace(t)
	for _, args := range [][]string{{"fj,bcj"}, {"fj/a"}} {
		r := musterctl(append([]string{"get", "-n", ns, "-w"}, args...)...)
		if r.code != 1 || !strings.Contains(r.err, "error: -w watches one kind: musterctl get KIND [NAME ...] -w") {
			t.Errorf("get %v -w:\n%s", args, r)
		}
	}
}

// A watched job deleted before it finished can never finish: the watch exits 1 naming it.
func TestWatchExitsWhenAJobIsDeletedBeforeItFinished(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob(t, ns, "doomed", nil)
	w := startWatch(t, "get", "fj", "doomed", "-n", ns, "-w", "--exit-on-finish")
	w.waitRows(t, 1)
	if err := env.Client.Delete(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t); code != 1 || !strings.Contains(w.err.String(), "error: deleted before it finished: "+ns+"/doomed") {
		t.Errorf("exit %d after the job was deleted:\n%s\n%s", code, w.out.String(), w.err.String())
	}
}

// BroadcastJobs finish too: the watch exits 0 once the watched one completes.
func TestWatchExitsWhenABroadcastJobCompletes(t *testing.T) {
	ns := env.Namespace(t)
	u := sample(t, "broadcastjob", ns, "prefetch")
	w := startWatch(t, "get", "bcj", "prefetch", "-n", ns, "-w", "--exit-on-finish", "-o", "name")
	envtest.Eventually(t, "the first print", func() (bool, string) {
		return w.out.String() == "broadcastjob.muster.dev/prefetch\n", w.out.String() + w.err.String()
	})
	var bj musterv1.BroadcastJob
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(u), &bj); err != nil {
		t.Fatal(err)
	}
	bj.Status.Phase = musterv1.BroadcastJobCompleted
	bj.Status.Conditions = []metav1.Condition{condition(musterv1.BroadcastJobComplete, "Completed", "every node ran it")}
	if err := env.Client.Status().Update(t.Context(), &bj); err != nil {
		t.Fatal(err)
	}
	if code := w.exit(t); code != 0 {
		t.Errorf("exit %d after the BroadcastJob completed:\n%s\n%s", code, w.out.String(), w.err.String())
	}
	// Outside a table the object is printed again when it changed at all, as kubectl does.
	if got := w.out.String(); got != "broadcastjob.muster.dev/prefetch\nbroadcastjob.muster.dev/prefetch\n" {
		t.Errorf("watch -o name printed %q", got)
	}
}

// An empty namespace says so once, then the watch prints objects as they come.
func TestWatchAnEmptyNamespace(t *testing.T) {
	ns := env.Namespace(t)
	w := startWatch(t, "get", "fj", "-n", ns, "-w")
	envtest.Eventually(t, "the empty message", func() (bool, string) {
		return strings.TrimSpace(w.err.String()) == "No resources found in "+ns+" namespace.", w.err.String()
	})
	fleetJob(t, ns, "late", nil)
	w.waitRows(t, 1)
	if rows := w.rows(); !strings.HasPrefix(rows[0], "late Divided") {
		t.Errorf("watch row %q, want the new job", rows[0])
	}
}

// The table flags kubectl users know work on the server's tables too.
func TestGetTableFlags(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "labelled", map[string]string{"team": "ml", "tier": "gold"})
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--no-headers", "-o", "wide"}, []string{"labelled Divided"}},
		{[]string{"--show-labels"}, []string{"NAME MODE COMPLETIONS ACTIVE SUCCEEDED FAILED CLUSTERS PHASE AGE LABELS", "labelled Divided"}},
		{[]string{"-L", "team,tier", "--no-headers"}, []string{"labelled Divided"}},
	} {
		r := musterctl(append([]string{"get", "fj", "-n", ns}, c.args...)...)
		got := fields(r.out)
		if r.code != 0 || len(got) != len(c.want) {
			t.Errorf("get fj %v: want %d lines:\n%s", c.args, len(c.want), r)
			continue
		}
		for i, w := range c.want {
			if !strings.HasPrefix(got[i], w) {
				t.Errorf("get fj %v: line %q, want it to start with %q", c.args, got[i], w)
			}
		}
	}
	if r := musterctl("get", "fj", "-n", ns, "--show-labels"); !strings.HasSuffix(fields(r.out)[1], " team=ml,tier=gold") {
		t.Errorf("--show-labels shows no labels:\n%s", r)
	}
	if r := musterctl("get", "fj", "-n", ns, "-L", "team,tier", "--no-headers"); !strings.HasSuffix(fields(r.out)[0], " ml gold") {
		t.Errorf("-L team,tier shows no label columns:\n%s", r)
	}
	// One object as json is the object itself, not a List of one.
	r := musterctl("get", "fj", "labelled", "-n", ns, "-o", "json")
	if r.code != 0 || !strings.Contains(r.out, `"kind": "FleetJob"`) || strings.Contains(r.out, `"kind": "List"`) {
		t.Errorf("get fj labelled -o json:\n%s", r)
	}
}
