// Package browser drives a real headless Chromium (Debian's chromium) for the tests of
// Muster's web pages: open a page, evaluate JavaScript in it, take a screenshot.
package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Chromium is a headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: the browser reads commands on fd 3 and writes replies on fd 4,
// each a JSON message ending in a NUL byte). A pipe rather than --dump-dom because a page
// that follows an event stream keeps a request open for ever, and --virtual-time-budget,
// which --dump-dom needs to let a page's script run, does not advance while one is open.
type Chromium struct {
	cmd     *exec.Cmd
	toPipe  *os.File
	stderr  bytes.Buffer
	mu      sync.Mutex
	lastID  int
	pending map[int]chan cdpReply
	// session is the attached page's DevTools session.
	session string
}

type cdpReply struct {
	ID        int             `json:"id"`
	Result    json.RawMessage `json:"result"`
	Error     *cdpError       `json:"error"`
	SessionID string          `json:"sessionId"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
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

// Start starts a headless browser with one blank page, attached, its viewport
// width×height,
// and stops it when the test ends. The flags keep it off the network, which this machine
// does not reach (each background service would retry), and out of any profile.
func Start(t testing.TB, width, height int) *Chromium {
	t.Helper()
	cmdIn, toPipe, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromPipe, cmdOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &Chromium{toPipe: toPipe, pending: map[int]chan cdpReply{}}
	b.cmd = exec.Command(Path(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--hide-scrollbars", fmt.Sprintf("--window-size=%d,%d", width, height),
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdIn, cmdOut}
	b.cmd.Stderr = &b.stderr
	// Its own process group: the renderer and helper processes go with it if it hangs.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", b.cmd.Path, err)
	}
	cmdIn.Close()
	cmdOut.Close()
	go b.read(fromPipe)
	t.Cleanup(func() { b.stop(t) })

	var target struct{ TargetID string }
	if err := b.call(t.Context(), "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		t.Fatalf("opening a page: %v\n%s", err, b.stderr.String())
	}
	var attached struct{ SessionID string }
	if err := b.call(t.Context(), "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		t.Fatal(err)
	}
	b.session = attached.SessionID
	// The window's size includes what a window has around its page; the viewport is what
	// the screenshot shows.
	viewport := map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}
	if err := b.call(t.Context(), b.session, "Emulation.setDeviceMetricsOverride", viewport, nil); err != nil {
		t.Fatal(err)
	}
	return b
}

// read delivers each reply to its caller; events, which carry no id, are dropped.
func (b *Chromium) read(r io.ReadCloser) {
	defer r.Close()
	msgs := bufio.NewReader(r)
	for {
		msg, err := msgs.ReadBytes(0)
		if err != nil {
			break
		}
		var reply cdpReply
		if json.Unmarshal(msg[:len(msg)-1], &reply) != nil || reply.ID == 0 {
			continue
		}
		b.mu.Lock()
		ch := b.pending[reply.ID]
		delete(b.pending, reply.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- reply
		}
	}
	// The browser is gone: fail whoever still waits.
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, ch := range b.pending {
		ch <- cdpReply{ID: id, Error: &cdpError{Message: "the browser closed its pipe"}}
		delete(b.pending, id)
	}
	b.pending = nil
}

// call sends method to the browser (session "") or a page and decodes its result.
func (b *Chromium) call(ctx context.Context, session, method string, params, result any) error {
	b.mu.Lock()
	if b.pending == nil {
		b.mu.Unlock()
		return errors.New("the browser is gone")
	}
	b.lastID++
	id, ch := b.lastID, make(chan cdpReply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params, "sessionId": session})
	if err != nil {
		return err
	}
	if _, err := b.toPipe.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case reply := <-ch:
		if reply.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, reply.Error.Message, reply.Error.Code)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(reply.Result, result)
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

// Navigate opens url in the page.
func (b *Chromium) Navigate(t testing.TB, url string) {
	t.Helper()
	var nav struct{ ErrorText string }
	if err := b.call(t.Context(), b.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		t.Fatal(err)
	}
	if nav.ErrorText != "" {
		t.Fatalf("opening %s: %s", url, nav.ErrorText)
	}
}

// Eval evaluates a JavaScript expression of a string value in the page.
func (b *Chromium) Eval(t testing.TB, expr string) string {
	t.Helper()
	var out struct {
		Result           struct{ Value any }
		ExceptionDetails *struct{ Text string }
	}
	if err := b.call(t.Context(), b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &out); err != nil {
		t.Fatal(err)
	}
	if out.ExceptionDetails != nil {
		t.Fatalf("%s: %s", expr, out.ExceptionDetails.Text)
	}
	s, _ := out.Result.Value.(string)
	return s
}

// WaitFor evaluates expr until it gives want, for up to timeout, and returns how long that
// took. Until then expr may throw: the page may still be loading.
func (b *Chromium) WaitFor(t testing.TB, expr, want string, timeout time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	var got string
	for time.Since(start) < timeout {
		if got = b.Eval(t, "(() => { try { return String("+expr+") } catch (e) { return 'threw ' + e } })()"); got == want {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s:\n got %q\nwant %q", expr, got, want)
	return 0
}

// Screenshot captures the page's viewport as a PNG.
func (b *Chromium) Screenshot(t testing.TB) []byte {
	t.Helper()
	var shot struct{ Data string }
	if err := b.call(t.Context(), b.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// stop closes the browser, and kills its process group if it does not exit.
func (b *Chromium) stop(t testing.TB) {
	b.call(context.Background(), "", "Browser.close", nil, nil)
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Logf("chromium did not exit after Browser.close; killing process group %d", b.cmd.Process.Pid)
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	b.toPipe.Close()
	if t.Failed() {
		t.Logf("chromium's stderr:\n%s", lastLines(b.stderr.String(), 30))
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

// Colours counts the distinct colours of a PNG and, for each of targets, its pixels within
// two steps per channel of it (colour management may round a channel).
func Colours(t testing.TB, shot []byte, targets ...color.RGBA) (width, height, distinct int, counts []int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is no PNG: %v", err)
	}
	seen := map[color.RGBA]bool{}
	counts = make([]int, len(targets))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			for i, target := range targets {
				if near(c, target) {
					counts[i]++
				}
			}
		}
	}
	return b.Dx(), b.Dy(), len(seen), counts
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.R, b.R) <= 2 && d(a.G, b.G) <= 2 && d(a.B, b.B) <= 2
}
