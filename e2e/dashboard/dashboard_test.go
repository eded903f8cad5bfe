//go:build e2e

// Package dashboard opens `musterctl dashboard` on a demo fleet in a real headless
// Chromium and follows the demo's jobs on the page as the fleet runs them.
package dashboard

import (
	"bufio"
	"image/color"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/browser"
	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

// TestMain brings up the demo's fleet: a hub and two members of three nodes each.
func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{Name: "dashboard", Fleet: framework.FleetOptions{Members: 2, NodesPerMember: 3}}, &fleet, &muster))
}

// TestDashboardFollowsTheDemoJobs opens the page before the demo's jobs exist, creates
// them as `make demo` does, and waits for the open page to show them complete in both
// members: every change reaches the page through the live stream.
func TestDashboardFollowsTheDemoJobs(t *testing.T) {
	chromium := browser.Start(t, 1280, 900)
	chromium.Navigate(t, startDashboard(t))
	chromium.WaitFor(t, "document.body.dataset.live", "connected", 30*time.Second)
	var members []string
	for _, m := range fleet.Members {
		members = append(members, m.Name)
		chromium.WaitFor(t, rowText(`tr[data-name="`+m.Name+`"] td:nth-child(2)`), "Available", 30*time.Second)
		chromium.WaitFor(t, rowText(`tr[data-name="`+m.Name+`"] td:nth-child(4)`), "3/3", 30*time.Second)
	}

	start := time.Now()
	fj := &musterv1.FleetJob{}
	readSample(t, "fleetjob.yaml", fj)
	fj.Spec.Placement.ClusterSelector, fj.Spec.Placement.ClusterNames = nil, members
	bj := &musterv1.BroadcastJob{}
	readSample(t, "broadcastjob.yaml", bj)
	bj.Spec.Placement.ClusterNames, bj.Spec.CompletionPolicy.TTLSecondsAfterFinished = members, nil
	cron := &musterv1.FleetCronJob{}
	readSample(t, "fleetcronjob.yaml", cron)
	for _, err := range []error{
		fleet.Hub.Client.Create(t.Context(), fj),
		fleet.Hub.Client.Create(t.Context(), bj),
		fleet.Hub.Client.Create(t.Context(), cron),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}

	fjRow := `tr[data-key="FleetJob/` + fj.Namespace + `/` + fj.Name + `"]`
	bjRow := `tr[data-key="BroadcastJob/` + bj.Namespace + `/` + bj.Name + `"]`
	chromium.WaitFor(t, shards(fjRow), perMember(members, "Complete"), 3*time.Minute)
	chromium.WaitFor(t, rowText(fjRow+` .progress .count`), "20/20", 30*time.Second)
	chromium.WaitFor(t, shards(bjRow), perMember(members, "Completed"), 3*time.Minute)
	chromium.WaitFor(t, rowText(bjRow+` .progress .count`), "6/6", 30*time.Second)
	t.Logf("the open page showed both demo jobs complete in every member %v after they were created", time.Since(start).Round(time.Second))
	next := chromium.Eval(t, rowText(`tr[data-key="`+cron.Namespace+`/`+cron.Name+`"] .next-run`))
	if !regexp.MustCompile(`^in \d`).MatchString(next) {
		t.Errorf("the FleetCronJob's next run reads %q, want a time ahead", next)
	}

	shot := chromium.Screenshot(t)
	if dir := os.Getenv("MUSTER_SCREENSHOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "dashboard-fleet.png"), shot, 0o644); err != nil {
			t.Errorf("saving the screenshot: %v", err)
		}
	}
	_, _, colours, badges := browser.Colours(t, shot, color.RGBA{0xdc, 0xff, 0xe4, 0xff})
	t.Logf("screenshot: %d colours, %d pixels of the green badge", colours, badges[0])
	// Two clusters, two jobs and four shards, each a green badge of 600 to 800 pixels.
	if colours < 50 || badges[0] < 8*500 {
		t.Errorf("the screenshot does not show the fleet: %d colours, %d pixels of green badges", colours, badges[0])
	}
}

// startDashboard runs the real `musterctl dashboard` against the hub on a free port until
// the test ends, and returns the address it prints.
func startDashboard(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(muster.Bin.Musterctl, "--kubeconfig", fleet.Hub.Kubeconfig, "dashboard", "--address", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Errorf("interrupting musterctl dashboard: %v", err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("musterctl dashboard did not stop cleanly on SIGINT: %v\n%s", err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("musterctl dashboard printed no address: %v\n%s", err, stderr.String())
	}
	url := regexp.MustCompile(`http://\S+/`).FindString(line)
	if url == "" {
		t.Fatalf("musterctl dashboard printed %q, no address", line)
	}
	// Keep reading, so that nothing it prints later blocks it.
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return url
}

// rowText is a JavaScript expression: the text of the element selector names, spaces
// collapsed.
func rowText(selector string) string {
	return `document.querySelector('` + selector + `').textContent.replace(/\s+/g, " ").trim()`
}

// shards is a JavaScript expression: "cluster:phase" of every shard in the row, in order.
func shards(row string) string {
	return `Array.from(document.querySelectorAll('` + row + ` .shard')).map(s => s.dataset.cluster + ":" + s.querySelector(".badge").textContent).join(",")`
}

func perMember(members []string, phase string) string {
	var parts []string
	for _, m := range members {
		parts = append(parts, m+":"+phase)
	}
	return strings.Join(parts, ",")
}

// readSample decodes deploy/samples/<name> into obj, as the README applies it.
func readSample(t *testing.T, name string, obj any) {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		t.Fatalf("reading the sample %s: %v", name, err)
	}
}
