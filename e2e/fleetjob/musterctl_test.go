//go:build e2e

package fleetjob

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// TestMusterctlFollowsAndDescribesARealFleetJob runs the built musterctl binary against
// the hub while a divided FleetJob runs on both members: get -w --exit-on-finish follows
// it and exits 0 when it completes, get prints it in kubectl's formats, and describe shows
// each member's shard with its Work's conditions and the member Job's fed-back status.
func TestMusterctlFollowsAndDescribesARealFleetJob(t *testing.T) {
	t.Parallel()
	fj := create(t, newFleetJob("cli", musterv1.PlacementDivided, 2, 4, indexedMode, lasting(3*time.Second)))
	watchCtx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := muster.Musterctl(watchCtx, fleet.Hub, "get", "fj", fj.Name, "-n", ns, "-w", "--exit-on-finish")
	var rows []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, fj.Name+" ") {
			rows = append(rows, strings.Join(strings.Fields(l), " "))
		}
	}
	if err != nil || len(rows) < 2 || !strings.Contains(rows[len(rows)-1], "Complete") {
		t.Fatalf("get -w --exit-on-finish (%v after %s):\n%s", err, time.Since(start).Round(time.Second), out)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i] == rows[i-1] {
			t.Errorf("the watch printed row %q twice in a row:\n%s", rows[i], out)
		}
	}
	t.Logf("get -w --exit-on-finish exited 0 after %s with %d rows", time.Since(start).Round(100*time.Millisecond), len(rows))

	if got := musterctl(t, "get", "fj", fj.Name, "-n", ns, "-o", "jsonpath={.status.phase}"); got != "Complete" {
		t.Errorf("-o jsonpath phase = %q", got)
	}
	if got := musterctl(t, "get", "fleetjobs", "-n", ns, "-o", "name"); !strings.Contains(got, "fleetjob.muster.dev/"+fj.Name) {
		t.Errorf("-o name:\n%s", got)
	}

	desc := musterctl(t, "describe", "fj", fj.Name, "-n", ns)
	for _, want := range []string{
		member1.Name + " Complete",
		member2.Name + " Complete",
		"TOTAL Complete - 4 0 4 0 -",
		"Applied: True",
		"Available: True",
		"Job: 0 active / 0 ready / 2 succeeded / 0 failed",
	} {
		if !strings.Contains(squashed(desc), "\n"+want) {
			t.Errorf("describe lacks a line starting %q:\n%s", want, desc)
		}
	}
	// The hub's Complete condition and each member Job's, as its agent fed it back.
	if n := strings.Count(squashed(desc), "\nComplete True "); n < 3 {
		t.Errorf("describe shows %d Complete conditions, want the hub's and both members':\n%s", n, desc)
	}

	if out, err := muster.Musterctl(t.Context(), fleet.Hub, "get", "fj", "absent", "-n", ns); err == nil || !strings.Contains(out, `fleetjobs.muster.dev "absent" not found`) {
		t.Errorf("get of a missing FleetJob: %v\n%s", err, out)
	}
}

func musterctl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := muster.Musterctl(t.Context(), fleet.Hub, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// squashed is out with each line's cells joined by single spaces, each line after "\n".
func squashed(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		b.WriteString("\n" + strings.Join(strings.Fields(l), " "))
	}
	return b.String()
}

// TestMusterctlVerbsAndFormatsOnTheFleet runs each read verb and output format of the
// built musterctl against the fleet's hub, as a user following the README would.
func TestMusterctlVerbsAndFormatsOnTheFleet(t *testing.T) {
	t.Parallel()
	fj := create(t, newFleetJob("formats", musterv1.PlacementDuplicate, 1, 1, func(fj *musterv1.FleetJob) {
		fj.Labels = map[string]string{"team": "render"}
	}))
	waitForPhase(t, fj, musterv1.JobComplete, 2*time.Minute)

	clusters := squashed(musterctl(t, "get", "clusters"))
	for _, m := range []string{member1.Name, member2.Name} {
		if !strings.Contains(clusters, "\n"+m+" true True ") {
			t.Errorf("get clusters lacks an accepted, available row for %s:%s", m, clusters)
		}
	}
	if out := musterctl(t, "get", "mc", member1.Name, "-o", "yaml"); !strings.Contains(out, "kind: MemberCluster") || !strings.Contains(out, "name: "+member1.Name) {
		t.Errorf("get mc -o yaml:\n%s", out)
	}
	var got musterv1.FleetJob
	if err := json.Unmarshal([]byte(musterctl(t, "get", "fj", fj.Name, "-n", ns, "-o", "json")), &got); err != nil || got.Status.Phase != musterv1.JobComplete {
		t.Errorf("get fj -o json: phase %q, %v", got.Status.Phase, err)
	}
	if out := squashed(musterctl(t, "get", "fj", fj.Name, "-n", ns, "-o", "wide")); !strings.Contains(out, "\nNAME MODE COMPLETIONS ACTIVE SUCCEEDED FAILED CLUSTERS PHASE AGE READY SHARD FAILURE STARTED") {
		t.Errorf("get -o wide lacks the wide columns:%s", out)
	}
	if out := strings.TrimSpace(musterctl(t, "get", "fj", "-A", "-l", "team=render", "-o", "name")); out != "fleetjob.muster.dev/"+fj.Name {
		t.Errorf("get fj -A -l team=render -o name = %q, want only %s", out, fj.Name)
	}
	if out := squashed(musterctl(t, "get", "fj", "-A", "-l", "team=render")); !strings.Contains(out, "\nNAMESPACE NAME ") || !strings.Contains(out, "\n"+ns+" "+fj.Name+" Duplicate 2/2 ") {
		t.Errorf("get fj -A lacks the namespace column or the row:%s", out)
	}
	works := musterctl(t, "get", "works", "-A", "-l", musterv1.FleetJobUIDLabel+"="+string(fj.UID), "-o", "name")
	if n := len(strings.Fields(works)); n != 2 {
		t.Errorf("get works -l of the job's uid: %d Works, want one per member:\n%s", n, works)
	}
	if out := musterctl(t, "version"); !strings.Contains(out, "hub API server: v1.") {
		t.Errorf("version:\n%s", out)
	}

	created := musterctl(t, "token", "create", "--cluster", "eu-1", "--ttl", "10m")
	id := regexp.MustCompile(`--hub-token ([a-z0-9]{6})\.`).FindStringSubmatch(created)
	if id == nil {
		t.Fatalf("token create printed no join line:\n%s", created)
	}
	if out := squashed(musterctl(t, "token", "list")); !strings.Contains(out, "\n"+id[1]+" ") || !strings.Contains(out, " eu-1 ") {
		t.Errorf("token list lacks %s bound to eu-1:%s", id[1], out)
	}
	musterctl(t, "token", "delete", id[1])
	if out := musterctl(t, "token", "list"); strings.Contains(out, id[1]) {
		t.Errorf("token %s still listed after delete:\n%s", id[1], out)
	}

	if out, err := muster.Musterctl(t.Context(), fleet.Hub, "get", "foo"); err == nil || !strings.Contains(out, `the server doesn't have a resource type "foo"`) {
		t.Errorf("get foo: %v\n%s", err, out)
	}
}
