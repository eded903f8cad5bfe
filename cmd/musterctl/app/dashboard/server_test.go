package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/cmd/musterctl/app/dashboard"
)

func TestPageShowsClustersJobsAndSchedules(t *testing.T) {
	d := newDemo(t)
	page := get(t, startDashboard(t)+"/")

	for _, want := range []struct{ tag, attr, text string }{
		{"tr", `data-name="` + d.member1 + `"`, d.member1 + " Available yes 3/3 v1.36.3 -"},
		{"tr", `data-name="` + d.member2 + `"`, d.member2 + " Available yes 3/3 v1.36.3 maintenance=kernel:NoSchedule"},
		{"tr", `data-key="FleetJob/` + d.ns + `/render-frames"`, "FleetJob " + d.ns + "/ render-frames Running 7/20 4 active " +
			d.member1 + " Running 4/10 2 active " + d.member2 + " Running 3/10 2 active"},
		{"tr", `data-key="BroadcastJob/` + d.ns + `/prefetch-image"`, "BroadcastJob " + d.ns + "/ prefetch-image Completed 6/6 " +
			d.member1 + " Completed 3/3 " + d.member2 + " Completed 3/3"},
	} {
		el, err := element(page, want.tag, want.attr)
		if err != nil {
			t.Fatalf("%v\n%s", err, page)
		}
		if got := text(el); got != want.text {
			t.Errorf("%s:\n got %q\nwant %q", want.attr, got, want.text)
		}
	}
	cron, err := element(page, "tr", `data-key="`+d.ns+`/nightly-report"`)
	if err != nil {
		t.Fatal(err)
	}
	// The next 02:30 in Berlin is less than a day away.
	if got := text(cron); !strings.HasPrefix(got, d.ns+"/ nightly-report 30 2 * * * Europe/Berlin FleetJob 0 3h ago in ") {
		t.Errorf("schedule row: %q", got)
	}
}

func TestJSONHasPerClusterProgressAndNextRun(t *testing.T) {
	d := newDemo(t)
	var fleet dashboard.Fleet
	if err := json.Unmarshal([]byte(get(t, startDashboard(t)+"/fleet.json")), &fleet); err != nil {
		t.Fatal(err)
	}
	var job *dashboard.Job
	for i, j := range fleet.Jobs {
		if j.Kind == "FleetJob" && j.Namespace == d.ns && j.Name == "render-frames" {
			job = &fleet.Jobs[i]
		}
	}
	if job == nil {
		t.Fatalf("render-frames is not among the jobs: %+v", fleet.Jobs)
	}
	want := []dashboard.ClusterProgress{
		{Cluster: d.member1, Phase: "Running", Progress: dashboard.Progress{Done: 4, Total: 10, Active: 2, Succeeded: 4, Percent: 40}},
		{Cluster: d.member2, Phase: "Running", Progress: dashboard.Progress{Done: 3, Total: 10, Active: 2, Succeeded: 3, Percent: 30}},
	}
	if len(job.Clusters) != 2 || job.Clusters[0] != want[0] || job.Clusters[1] != want[1] {
		t.Errorf("clusters = %+v, want %+v", job.Clusters, want)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fleet.Crons {
		if c.Namespace != d.ns {
			continue
		}
		next := c.NextRun.In(berlin)
		if next.Hour() != 2 || next.Minute() != 30 || !next.After(fleet.Generated) || next.Sub(fleet.Generated) > 25*time.Hour {
			t.Errorf("next run %v is not the next 02:30 in Berlin after %v", next, fleet.Generated)
		}
		return
	}
	t.Errorf("nightly-report is not among the schedules: %+v", fleet.Crons)
}

// TestLiveUpdates follows the event stream as the page does: a status written on the hub
// reaches the open page, and a deleted job leaves it.
func TestLiveUpdates(t *testing.T) {
	d := newDemo(t)
	events := follow(t, startDashboard(t)+"/events")
	shard := `data-cluster="` + d.member1 + `"`
	fleetJobRow := `data-key="FleetJob/` + d.ns + `/render-frames"`
	waitForEvent(t, events, "the first event", func(page string) bool {
		return shardText(page, fleetJobRow, shard) == d.member1+" Running 4/10 2 active"
	})

	d.fleetJob.Status.Clusters[0].Phase, d.fleetJob.Status.Clusters[0].Active, d.fleetJob.Status.Clusters[0].Succeeded = musterv1.JobComplete, 0, 10
	written := time.Now()
	if err := env.Client.Status().Update(t.Context(), d.fleetJob); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, events, "member1's shard complete", func(page string) bool { return shardText(page, fleetJobRow, shard) == d.member1+" Complete 10/10" })
	t.Logf("status update reached the page in %v", time.Since(written).Round(time.Millisecond))

	if err := env.Client.Delete(t.Context(), d.broadcastJob); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, events, "the deleted BroadcastJob gone", func(page string) bool {
		return !strings.Contains(page, `data-key="BroadcastJob/`+d.ns+`/prefetch-image"`)
	})
}

// TestRequestsAreServedFromTheCache checks that pages, JSON and event streams cost the API
// server nothing: after the informers' lists, only their watches reach it.
func TestRequestsAreServedFromTheCache(t *testing.T) {
	newDemo(t)
	var reads atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true" {
				reads.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv, err := dashboard.Start(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ctx, ln) }() // ends with ctx; startDashboard checks that Serve stops cleanly
	base := "http://" + ln.Addr().String()
	get(t, base+"/")
	before := reads.Load()
	for range 10 {
		get(t, base+"/")
		get(t, base+"/fleet.json")
	}
	waitForEvent(t, follow(t, base+"/events"), "an event", func(string) bool { return true })
	if after := reads.Load(); after != before {
		t.Errorf("serving 21 requests read the API server %d times", after-before)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// follow opens the event stream at url and returns the data of its "fleet" events.
func follow(t *testing.T, url string) <-chan string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("event stream has Content-Type %q", ct)
	}
	out := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		var name string
		var data []string
		lines := bufio.NewScanner(resp.Body)
		lines.Buffer(nil, 1<<22)
		for lines.Scan() {
			switch line := lines.Text(); {
			case line == "":
				if name == "fleet" {
					out <- strings.Join(data, "\n")
				}
				name, data = "", nil
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return out
}

// waitForEvent reads events until one satisfies ok, for up to 15 seconds.
func waitForEvent(t *testing.T, events <-chan string, what string, ok func(page string) bool) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	last := "(no event)"
	for {
		select {
		case page, open := <-events:
			if !open {
				t.Fatalf("%s: the event stream ended; last event:\n%s", what, last)
			}
			if ok(page) {
				return
			}
			last = page
		case <-timeout:
			t.Fatalf("%s: never came; last event:\n%s", what, last)
		}
	}
}

// shardText is the text of one cluster's shard in one job's row, empty when absent.
func shardText(page, row, shard string) string {
	r, err := element(page, "tr", row)
	if err != nil {
		return ""
	}
	s, err := element(r, "div", shard)
	if err != nil {
		return ""
	}
	return text(s)
}

// TestOtherHostsAreRefused: a page on 127.0.0.1 answers only requests that name a loopback
// host, so that a web site cannot read it through a name it points at 127.0.0.1.
func TestOtherHostsAreRefused(t *testing.T) {
	base := startDashboard(t)
	req, err := http.NewRequest(http.MethodGet, base+"/fleet.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "rebound.example:8420"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a request for host %s got %s, want 403 Forbidden", req.Host, resp.Status)
	}
}

// TestOneNamespace serves one namespace, as `musterctl dashboard -n` does: another
// namespace's jobs and schedules stay off the page, every cluster stays on. (The name is
// short: newDemo names clusters after the test.)
func TestOneNamespace(t *testing.T) {
	shown := newDemo(t)
	// Another namespace's demo; its clusters go when the subtest ends, its jobs stay.
	if !t.Run("other", func(t *testing.T) { newDemo(t) }) {
		t.FailNow()
	}
	var fleet dashboard.Fleet
	if err := json.Unmarshal([]byte(get(t, startDashboardIn(t, shown.ns)+"/fleet.json")), &fleet); err != nil {
		t.Fatal(err)
	}
	namespaces := map[string]int{}
	for _, j := range fleet.Jobs {
		namespaces[j.Namespace]++
	}
	for _, c := range fleet.Crons {
		namespaces[c.Namespace]++
	}
	if len(namespaces) != 1 || namespaces[shown.ns] != 3 {
		t.Errorf("jobs and schedules by namespace = %v, want the 3 of %s only", namespaces, shown.ns)
	}
	clusters := map[string]bool{}
	for _, c := range fleet.Clusters {
		clusters[c.Name] = true
	}
	for _, name := range []string{shown.member1, shown.member2} {
		if !clusters[name] {
			t.Errorf("cluster %s is missing from a namespace's page", name)
		}
	}
}
