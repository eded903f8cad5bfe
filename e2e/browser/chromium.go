// Package browser drives a real headless Chromium (Debian's chromium) through chromedp for
// the tests of Muster's web pages: open a page, evaluate JavaScript in it, wait for what it
// shows, take a screenshot. Each helper fails the test rather than return an error.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// callTimeout bounds each command sent to the page, so that a hung browser fails the test
// instead of holding it until go test's own timeout.
const callTimeout = 30 * time.Second

// Chromium is one headless browser with one page, which every method acts on.
type Chromium struct {
	// ctx is chromedp's context of the page; cancelling it closes the browser.
	ctx context.Context
}

// Path finds the browser: MUSTER_CHROMIUM, else Debian's chromium on the PATH. The
// test fails rather than skips without one: CI installs it (.ci/run).
func Path(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MUSTER_CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("browser tests need Chromium: install Debian's package (apt-get install -y chromium; .ci/run does) or set MUSTER_CHROMIUM to a Chromium binary")
	}
	return p
}

// Start starts a headless browser with one blank page whose viewport is width×height, and
// stops it when the test ends. chromedp's defaults keep it headless, out of any profile
// (a fresh user data directory that it removes) and add --no-sandbox when run as root;
// the extra flags keep it off the network, which this machine does not reach (each
// background service would retry).
func Start(t testing.TB, width, height int) *Chromium {
	t.Helper()
	output := &lockedBuffer{}
	path := Path(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(width, height),
		chromedp.CombinedOutput(output),
	)
	// Not the test's context: that ends before the cleanups run, which would kill the
	// browser rather than let stop close it.
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelPage := chromedp.NewContext(allocCtx)
	b := &Chromium{ctx: ctx}
	t.Cleanup(func() { b.stop(t, cancelPage, cancelAlloc, output) })
	// The first action launches the browser, which lives as long as that action's context:
	// so it runs on the page's own context, and a timer rather than a deadline bounds it.
	// The window's size includes what a window has around its page; the viewport is what
	// the screenshot shows.
	hung := time.AfterFunc(callTimeout, cancelPage)
	err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height)))
	if !hung.Stop() {
		err = fmt.Errorf("no answer in %v: %w", callTimeout, err)
	}
	if err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return b
}

// run runs action on the page, giving up after timeout.
func run[T any](b *Chromium, timeout time.Duration, action chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	return chromedp.Run(ctx, action)
}

// Navigate opens url in the page and waits for it to load.
func (b *Chromium) Navigate(t testing.TB, url string) {
	t.Helper()
	if _, err := run(b, callTimeout, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

// Eval evaluates a JavaScript expression of a string value in the page.
func (b *Chromium) Eval(t testing.TB, expr string) string {
	t.Helper()
	s, err := run(b, callTimeout, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return s
}

// WaitFor waits, for up to timeout, until expr gives want in the page, and returns how long
// that took. Until then expr may throw: the page may still be filling in. On a timeout
// the test fails with what expr gave last.
func (b *Chromium) WaitFor(t testing.TB, expr, want string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	matches := "(want) => { try { return String(" + expr + ") === want } catch (e) { return false } }"
	_, err := run(b, timeout+callTimeout, chromedp.PollFunction[bool](matches, chromedp.WithPollingArgs(want),
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err == nil {
		return time.Since(start)
	}
	if !errors.Is(err, chromedp.ErrPollingTimeout) {
		t.Fatalf("%s: %v", expr, err)
	}
	got := b.Eval(t, "(() => { try { return String("+expr+") } catch (e) { return 'threw ' + e } })()")
	t.Fatalf("%s after %v:\n got %q\nwant %q", expr, timeout, got, want)
	return 0
}

// Screenshot captures the page's viewport as a PNG.
func (b *Chromium) Screenshot(t testing.TB) []byte {
	t.Helper()
	png, err := run(b, callTimeout, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("taking a screenshot: %v", err)
	}
	return png
}

// stop closes the browser and waits until it and every process it started are gone
// (chromedp kills what outlives it) and its user data directory is removed.
func (b *Chromium) stop(t testing.TB, cancelPage, cancelAlloc context.CancelFunc, output *lockedBuffer) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Cancel(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("closing chromium: %v", err)
	}
	// Kill the browser if it did not close in time, and wait for it and its children.
	cancelPage()
	cancelAlloc()
	if t.Failed() {
		t.Logf("chromium's output:\n%s", lastLines(output.String(), 30))
	}
}

// lastLines is the last n lines of s but for the complaints about the missing D-Bus,
// which a machine without a desktop session always gets.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.Contains(l, ":ERROR:dbus/") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// lockedBuffer keeps the browser's output, which chromedp writes from its own goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
