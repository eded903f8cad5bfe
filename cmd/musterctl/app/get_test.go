package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestGetListsEveryKindByEveryName(t *testing.T) {
	ns := env.Namespace(t)
	cluster := uniqueName("getkinds")
	memberNS := memberNamespace(t, cluster)
	fleetJob(t, ns, "fj-one", nil)
	sample(t, "broadcastjob", ns, "bcj-one")
	sample(t, "fleetcronjob", ns, "fcj-one")
	sample(t, "workloadspread", ns, "wrs-one")
	sample(t, "membercluster", "", cluster)
	sample(t, "work", memberNS, "work-one")
	sample(t, "nodeslice", memberNS, "nsl-one")

	cases := []struct {
		kinds []string
		ns    string
		name  string
	}{
		{[]string{"fleetjobs", "fleetjob", "fj"}, ns, "fj-one"},
		{[]string{"broadcastjobs", "bcj"}, ns, "bcj-one"},
		{[]string{"fleetcronjobs", "fcj"}, ns, "fcj-one"},
		{[]string{"workloadspreads", "wrs"}, ns, "wrs-one"},
		{[]string{"clusters", "cluster", "memberclusters", "mc"}, ns, cluster},
		{[]string{"works", "work"}, memberNS, "work-one"},
		{[]string{"nodeslices", "nsl"}, memberNS, "nsl-one"},
	}
	for _, c := range cases {
		for _, kind := range c.kinds {
			t.Run(kind, func(t *testing.T) {
				// Listing.
				r := musterctl("get", kind, "-n", c.ns)
				if r.code != 0 || !hasLine(r.out, "NAME ") || !hasLine(r.out, c.name+" ") {
					t.Errorf("get %s lists no %s:\n%s", kind, c.name, r)
				}
				// By name, and in kubectl's kind/name form.
				for _, args := range [][]string{{kind, c.name}, {kind + "/" + c.name}} {
					r := musterctl(append([]string{"get", "-n", c.ns}, args...)...)
					if r.code != 0 || len(fields(r.out)) != 2 || !hasLine(r.out, c.name+" ") {
						t.Errorf("get %v does not show exactly %s:\n%s", args, c.name, r)
					}
				}
			})
		}
	}
}

func TestGetShowsTheServersPrinterColumns(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob(t, ns, "columns", nil)
	setStatus(t, fj, func(s *musterv1.FleetJobStatus) { s.Phase = musterv1.JobRunning; s.Succeeded = 1 })
	r := musterctl("get", "fj", "-n", ns)
	header := fields(r.out)[0]
	// The table is the CRD's: its columns, whatever they are, in its order.
	for _, col := range []string{"NAME", "MODE", "PHASE", "AGE"} {
		if !strings.Contains(header, col) {
			t.Errorf("header %q lacks the CRD column %s:\n%s", header, col, r)
		}
	}
	if !strings.Contains(fields(r.out)[1], "Divided") || !strings.Contains(fields(r.out)[1], "Running") {
		t.Errorf("row lacks the object's mode and phase:\n%s", r)
	}
}

func TestGetWideAddsThePriorityColumns(t *testing.T) {
	ns := env.Namespace(t)
	sampleWidget(t, ns, "w1", "big", "red")
	narrow := musterctl("get", "widgets", "-n", ns)
	wide := musterctl("get", "widgets", "-n", ns, "-o", "wide")
	if narrow.code != 0 || !hasLine(narrow.out, "NAME SIZE") || strings.Contains(narrow.out, "red") {
		t.Errorf("default table shows the priority column:\n%s", narrow)
	}
	if wide.code != 0 || !hasLine(wide.out, "NAME SIZE COLOR") || !strings.Contains(wide.out, "red") {
		t.Errorf("-o wide lacks the priority column:\n%s", wide)
	}
}

func TestGetOutputFormats(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "a", nil)
	fleetJob(t, ns, "b", nil)

	t.Run("yaml of one object", func(t *testing.T) {
		r := musterctl("get", "fj", "a", "-n", ns, "-o", "yaml")
		var got musterv1.FleetJob
		if err := yaml.Unmarshal([]byte(r.out), &got); r.code != 0 || err != nil || got.Kind != "FleetJob" || got.Name != "a" || got.Spec.Placement.Mode != musterv1.PlacementDivided {
			t.Errorf("not FleetJob a as YAML (%v):\n%s", err, r)
		}
	})
	t.Run("json of a list", func(t *testing.T) {
		r := musterctl("get", "fj", "-n", ns, "-o", "json")
		var got struct {
			Kind  string              `json:"kind"`
			Items []musterv1.FleetJob `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.out), &got); r.code != 0 || err != nil || got.Kind != "List" || len(got.Items) != 2 {
			t.Errorf("not a List of both FleetJobs (%v):\n%s", err, r)
		}
	})
	cases := []struct {
		name   string
		args   []string
		wanted []string
	}{
		{"name", []string{"-o", "name"}, []string{"fleetjob.muster.dev/a", "fleetjob.muster.dev/b"}},
		{"jsonpath", []string{"a", "-o", "jsonpath={.metadata.name}:{.spec.placement.mode}"}, []string{"a:Divided"}},
		{"jsonpath over a list", []string{"-o", "jsonpath={.items[*].metadata.name}"}, []string{"a b"}},
		{"custom-columns", []string{"-o", "custom-columns=JOB:.metadata.name,MODE:.spec.placement.mode"}, []string{"JOB MODE", "a Divided", "b Divided"}},
		{"no headers", []string{"--no-headers"}, []string{"a Divided", "b Divided"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := musterctl(append([]string{"get", "fj", "-n", ns}, c.args...)...)
			got := fields(r.out)
			if r.code != 0 || len(got) != len(c.wanted) {
				t.Fatalf("want lines starting %q:\n%s", c.wanted, r)
			}
			for i, w := range c.wanted {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("line %d = %q, want it to start with %q", i, got[i], w)
				}
			}
		})
	}
}

func TestGetNamespacesAndSelectors(t *testing.T) {
	ns1 := env.Namespace(t)
	other := ns1 + "-other"
	createNamespace(t, other)
	fleetJob(t, ns1, "mine", map[string]string{"team": "a"})
	fleetJob(t, ns1, "theirs", map[string]string{"team": "b"})
	fleetJob(t, other, "elsewhere", map[string]string{"team": "a"})

	only := func(r result, names ...string) bool {
		rows := fields(r.out)[1:]
		if r.code != 0 || len(rows) != len(names) {
			return false
		}
		for i, n := range names {
			if !strings.Contains(" "+rows[i]+" ", " "+n+" ") {
				return false
			}
		}
		return true
	}
	if r := musterctl("get", "fj", "-n", ns1); !only(r, "mine", "theirs") {
		t.Errorf("-n %s:\n%s", ns1, r)
	}
	if r := musterctl("get", "fj", "-n", ns1, "-l", "team=a"); !only(r, "mine") {
		t.Errorf("-l team=a:\n%s", r)
	}
	r := musterctl("get", "fj", "-A", "-l", "team=a")
	if !hasLine(r.out, "NAMESPACE NAME") || !hasLine(r.out, ns1+" mine") || !hasLine(r.out, other+" elsewhere") || strings.Contains(r.out, "theirs") {
		t.Errorf("-A -l team=a:\n%s", r)
	}
}

func TestGetErrorsExitNonZeroWithoutHelp(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "present", nil)
	cases := []struct {
		name    string
		args    []string
		stderr  string
		showsOK bool
	}{
		{"no kind", []string{"get"}, "error: you must specify the type of resource to get", false},
		{"unknown kind", []string{"get", "foo"}, `error: the server doesn't have a resource type "foo"`, false},
		{"missing object", []string{"get", "fj", "absent", "-n", ns}, `Error from server (NotFound): fleetjobs.muster.dev "absent" not found`, false},
		{"one of two missing", []string{"get", "fj", "present", "absent", "-n", ns}, `Error from server (NotFound): fleetjobs.muster.dev "absent" not found`, true},
		{"bad output", []string{"get", "fj", "-n", ns, "-o", "bogus"}, `unable to match a printer suitable for the output format "bogus"`, false},
		{"unknown command", []string{"frobnicate"}, `error: unknown command "frobnicate"`, false},
		{"describe with no kind", []string{"describe"}, "error: you must specify the type of resource to describe", false},
		{"exit-on-finish without watch", []string{"get", "fj", "--exit-on-finish"}, "error: --exit-on-finish needs -w", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := musterctl(c.args...)
			if r.code != 1 || !strings.Contains(r.err, c.stderr) {
				t.Errorf("want exit 1 and %q on stderr:\n%s", c.stderr, r)
			}
			if strings.Contains(r.out, "Usage:") || strings.Contains(r.err, "Usage:") {
				t.Errorf("printed help:\n%s", r)
			}
			if c.showsOK != hasLine(r.out, "present ") {
				t.Errorf("found objects shown = %t, want %t:\n%s", !c.showsOK, c.showsOK, r)
			}
		})
	}
}

func TestGetNothingSaysSo(t *testing.T) {
	ns := env.Namespace(t)
	r := musterctl("get", "fj", "-n", ns)
	if r.code != 0 || r.out != "" || strings.TrimSpace(r.err) != "No resources found in "+ns+" namespace." {
		t.Errorf("empty list:\n%s", r)
	}
}

func TestKubectlPluginNamesItself(t *testing.T) {
	var out, errOut strings.Builder
	if code := appRunAsPlugin(&out, &errOut, "get", "--help"); code != 0 || !strings.Contains(out.String(), "kubectl muster get KIND") {
		t.Errorf("kubectl-muster get --help: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

func TestGetSeveralKindsAtOnce(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "one", nil)
	sample(t, "broadcastjob", ns, "two")
	for _, kinds := range []string{"fj,bcj", "muster"} {
		r := musterctl("get", kinds, "-n", ns)
		// One table per kind, each row named with its kind, as kubectl does.
		if r.code != 0 || !hasLine(r.out, "fleetjob.muster.dev/one ") || !hasLine(r.out, "broadcastjob.muster.dev/two ") {
			t.Errorf("get %s:\n%s", kinds, r)
		}
	}
}

func TestGetSortBy(t *testing.T) {
	ns := env.Namespace(t)
	fleetJob(t, ns, "a", map[string]string{"rank": "2"})
	fleetJob(t, ns, "z", map[string]string{"rank": "1"})
	if r := musterctl("get", "fj", "-n", ns, "--no-headers", "--sort-by", ".metadata.labels.rank"); r.code != 0 || len(fields(r.out)) != 2 || !strings.HasPrefix(fields(r.out)[0], "z ") {
		t.Errorf("table sorted by rank:\n%s", r)
	}
	if r := musterctl("get", "fj", "-n", ns, "-o", "name", "--sort-by", "{.metadata.labels.rank}"); r.code != 0 || strings.TrimSpace(r.out) != "fleetjob.muster.dev/z\nfleetjob.muster.dev/a" {
		t.Errorf("names sorted by rank:\n%s", r)
	}
	if r := musterctl("get", "fj", "-n", ns, "-L", "rank"); r.code != 0 || !strings.HasSuffix(fields(r.out)[0], "RANK") || !strings.HasSuffix(fields(r.out)[1], " 2") {
		t.Errorf("-L rank adds no label column:\n%s", r)
	}
}
