package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// watching runs `musterctl get … -w` in the background; its result arrives on done.
type watching struct {
	out, err syncBuffer
	done     chan int
}

func startWatch(t *testing.T, args ...string) *watching {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	w := &watching{done: make(chan int, 1)}
	go func() { w.done <- runCtx(ctx, &w.out, &w.err, args...) }()
	return w
}

// rows is the watch's output so far, squashed, without its header.
func (w *watching) rows() []string {
	var rows []string
	for _, l := range fields(w.out.String()) {
		if l != "" && !strings.HasPrefix(l, "NAME ") {
			rows = append(rows, l)
		}
	}
	return rows
}

func (w *watching) waitRows(t *testing.T, n int) {
	t.Helper()
	envtest.Eventually(t, "watch output", func() (bool, string) {
		return len(w.rows()) >= n, w.out.String() + w.err.String()
	})
}

func (w *watching) exit(t *testing.T) int {
	t.Helper()
	select {
	case code := <-w.done:
		return code
	case <-time.After(15 * time.Second):
		t.Fatalf("the watch did not exit:\n%s\n%s", w.out.String(), w.err.String())
		return -1
	}
}

func TestWatchPrintsOnlyChangesAndExitsWhenTheJobCompletes(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob(t, ns, "watched", nil)
	fleetJob(t, ns, "bystander", nil)
	w := startWatch(t, "get", "fj", "watched", "-n", ns, "-w", "--exit-on-finish")
	w.waitRows(t, 1)

	// A write no column shows (a label) prints nothing.
	fj.Labels = map[string]string{"seen": "no"}
	if err := env.Client.Update(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	setStatus(t, fj, func(s *musterv1.FleetJobStatus) { s.Phase = musterv1.JobRunning; s.Active = 2 })
	w.waitRows(t, 2)
	setStatus(t, fj, func(s *musterv1.FleetJobStatus) {
		s.Phase, s.Active, s.Succeeded = musterv1.JobComplete, 0, 2
		s.Conditions = append(s.Conditions, condition(musterv1.FleetJobComplete, "Completed", "every shard completed"))
	})
	if code := w.exit(t); code != 0 {
		t.Errorf("exit %d after the job completed:\n%s\n%s", code, w.out.String(), w.err.String())
	}
	rows := w.rows()
	if len(rows) != 3 || !strings.Contains(rows[1], "Running") || !strings.Contains(rows[2], "Complete") {
		t.Errorf("want the first state, Running, Complete and nothing else:\n%s", w.out.String())
	}
	for _, r := range rows {
		if !strings.HasPrefix(r, "watched ") {
			t.Errorf("row of another job: %q", r)
		}
	}
	if n := strings.Count(w.out.String(), "NAME"); n != 1 {
		t.Errorf("header printed %d times:\n%s", n, w.out.String())
	}
}

func TestWatchExitsNonZeroWhenAJobFails(t *testing.T) {
	ns := env.Namespace(t)
	ok := fleetJob(t, ns, "fine", nil)
	bad := fleetJob(t, ns, "broken", nil)
	// Every FleetJob of the namespace is watched when none is named.
	w := startWatch(t, "get", "fj", "-n", ns, "-w", "--exit-on-finish")
	w.waitRows(t, 2)
	setStatus(t, bad, func(s *musterv1.FleetJobStatus) {
		s.Phase = musterv1.JobFailed
		s.Conditions = append(s.Conditions, condition(musterv1.FleetJobFailed, "BackoffLimitExceeded", "a shard failed"))
	})
	w.waitRows(t, 3)
	// The watch decides after printing each event: once it prints one that came after the
	// failure, it has decided not to exit on the failure alone.
	setStatus(t, ok, func(s *musterv1.FleetJobStatus) { s.Phase = musterv1.JobRunning; s.Active = 2 })
	w.waitRows(t, 4)
	select {
	case code := <-w.done:
		t.Fatalf("exit %d while %s still runs", code, ok.Name)
	default:
	}
	setStatus(t, ok, func(s *musterv1.FleetJobStatus) {
		s.Phase = musterv1.JobComplete
		s.Conditions = append(s.Conditions, condition(musterv1.FleetJobComplete, "Completed", "done"))
	})
	if code := w.exit(t); code != 1 || !strings.Contains(w.err.String(), "error: failed: "+ns+"/broken") {
		t.Errorf("exit %d, want 1 naming the failed job:\n%s\n%s", code, w.out.String(), w.err.String())
	}
}

func TestWatchWithoutExitFollowsOtherFormats(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob(t, ns, "yamlwatch", nil)
	w := startWatch(t, "get", "fj", "yamlwatch", "-n", ns, "-w", "-o", "jsonpath={.status.phase}{\"\\n\"}")
	envtest.Eventually(t, "first print", func() (bool, string) { return w.out.String() == "\n", w.out.String() + w.err.String() })
	setStatus(t, fj, func(s *musterv1.FleetJobStatus) { s.Phase = musterv1.JobRunning })
	envtest.Eventually(t, "the change", func() (bool, string) { return w.out.String() == "\nRunning\n", w.out.String() })
	if err := env.Client.Delete(t.Context(), fj); err != nil {
		t.Fatal(err)
	}
	// The deletion shows the last state once more only if it changed: it did not. Watch
	// events come in order, so once the job created again under the name shows (its empty
	// phase), the deletion before it has been handled.
	envtest.Eventually(t, "the job gone", func() (bool, string) {
		err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &musterv1.FleetJob{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	fleetJob(t, ns, "yamlwatch", nil)
	envtest.Eventually(t, "the new job shown", func() (bool, string) { return strings.Count(w.out.String(), "\n") >= 3, w.out.String() })
	if got := w.out.String(); got != "\nRunning\n\n" {
		t.Errorf("output %q, want the deleted job's unchanged state not shown again", got)
	}
}

func TestWatchExitOnFinishRefusesKindsThatDoNotFinish(t *testing.T) {
	ns := env.Namespace(t)
	r := musterctl("get", "clusters", "-n", ns, "-w", "--exit-on-finish")
	if r.code != 1 || !strings.Contains(r.err, "--exit-on-finish works with fleetjobs and broadcastjobs") {
		t.Errorf("%s", r)
	}
	if r := musterctl("get", "fj", "absent", "-n", ns, "-w"); r.code != 1 || !strings.Contains(r.err, `"absent" not found`) {
		t.Errorf("watching a missing job: %s", r)
	}
}
