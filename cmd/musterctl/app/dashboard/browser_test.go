package dashboard_test

import (
	"image/color"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/browser"
)

// TestBrowserShowsTheFleetLive opens the dashboard in a real headless Chromium: the page's
// script must connect to the event stream; the rendered page, in its DOM and in a
// screenshot, must show the clusters and the jobs' progress in every cluster; and a status
// written on the hub afterwards must appear in the open page by itself.
func TestBrowserShowsTheFleetLive(t *testing.T) {
	start := time.Now()
	chromium := browser.Start(t, 1280, 900)
	t.Logf("chromium started in %v", time.Since(start).Round(time.Millisecond))
	d := newDemo(t)

	start = time.Now()
	chromium.Navigate(t, startDashboard(t)+"/")
	chromium.WaitFor(t, "document.body.dataset.live", "connected", 20*time.Second)
	t.Logf("the page loaded and received its first live event in %v", time.Since(start).Round(time.Millisecond))

	dom := chromium.Eval(t, "document.documentElement.outerHTML")
	for _, want := range []struct{ tag, attr, text string }{
		{"tr", `data-name="` + d.member1 + `"`, d.member1 + " Available yes 3/3 v1.36.3 -"},
		{"tr", `data-name="` + d.member2 + `"`, d.member2 + " Available yes 3/3 v1.36.3 maintenance=kernel:NoSchedule"},
		{"tr", `data-key="FleetJob/` + d.ns + `/render-frames"`, "FleetJob " + d.ns + "/ render-frames Running 7/20 4 active " +
			d.member1 + " Running 4/10 2 active " + d.member2 + " Running 3/10 2 active"},
		{"tr", `data-key="BroadcastJob/` + d.ns + `/prefetch-image"`, "BroadcastJob " + d.ns + "/ prefetch-image Completed 6/6 " +
			d.member1 + " Completed 3/3 " + d.member2 + " Completed 3/3"},
	} {
		el, err := element(dom, want.tag, want.attr)
		if err != nil {
			t.Fatalf("%v\n%s", err, dom)
		}
		if got := text(el); got != want.text {
			t.Errorf("%s:\n got %q\nwant %q", want.attr, got, want.text)
		}
	}
	if _, err := element(dom, "tr", `data-key="`+d.ns+`/nightly-report"`); err != nil {
		t.Error(err)
	}
	shot := chromium.Screenshot(t)
	checkScreenshot(t, shot)
	if dir := os.Getenv("MUSTER_SCREENSHOT_DIR"); dir != "" {
		// For a person to look at: the test cannot judge the layout.
		if err := os.WriteFile(filepath.Join(dir, "dashboard.png"), shot, 0o644); err != nil {
			t.Error(err)
		}
	}

	// The page is open: the hub's status changes and the page follows without a reload.
	d.fleetJob.Status.Clusters[1].Phase, d.fleetJob.Status.Clusters[1].Active, d.fleetJob.Status.Clusters[1].Succeeded = musterv1.JobComplete, 0, 10
	if err := env.Client.Status().Update(t.Context(), d.fleetJob); err != nil {
		t.Fatal(err)
	}
	shard := `document.querySelector('tr[data-key="FleetJob/` + d.ns + `/render-frames"] div[data-cluster="` + d.member2 + `"]').textContent.replace(/\s+/g, " ").trim()`
	took := chromium.WaitFor(t, shard, d.member2+" Complete 10/10", 20*time.Second)
	t.Logf("the status update appeared in the open page after %v", took.Round(time.Millisecond))
	if got := chromium.Eval(t, "String(performance.getEntriesByType('navigation').length)"); got != strconv.Itoa(1) {
		t.Errorf("the page navigated %s times; the update must arrive without a reload", got)
	}
}

// checkScreenshot checks that the PNG shows a rendered dashboard, not a blank or error
// page: the viewport's size, many colours (text is anti-aliased), and the badges' colours
// — green for the available clusters and the completed BroadcastJob, blue for the
// running FleetJob — over areas the size of several badges.
func checkScreenshot(t *testing.T, shot []byte) {
	t.Helper()
	width, height, colours, badges := browser.Colours(t, shot, okBadge, runBadge)
	if width != 1280 || height != 900 {
		t.Errorf("screenshot is %dx%d, want 1280x900", width, height)
	}
	t.Logf("screenshot: %d bytes, %d colours, %d pixels of the green badge, %d of the blue", len(shot), colours, badges[0], badges[1])
	if colours < 50 {
		t.Errorf("the screenshot has %d colours: nothing much was rendered", colours)
	}
	// A badge's background is 600 to 800 pixels; the demo shows five green ones (two
	// clusters, the BroadcastJob and its two shards) and three blue (the FleetJob and its
	// two shards).
	if badges[0] < 5*500 || badges[1] < 3*500 {
		t.Errorf("the screenshot shows too little of the badges: %d green pixels, %d blue; is the stylesheet served?", badges[0], badges[1])
	}
}

// The badges' backgrounds in dashboard.css: .ok and .run.
var okBadge, runBadge = color.RGBA{0xdc, 0xff, 0xe4, 0xff}, color.RGBA{0xdb, 0xed, 0xff, 0xff}
