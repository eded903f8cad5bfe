package framework

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// PodSeen is what a watch saw of one pod, by its member API server's timestamps: when it
// was created, when its deletion timestamp says its grace period ends, and when its
// container finished; the Job that owns it and its fleet index.
type PodSeen struct {
	Created, Deleting, Finished time.Time
	Job, Index                  string
}

// Ended is the latest the pod can have run until, as far as the watch saw: its container
// finished or, deleted, its grace period ended, whichever came first. It is zero when the
// watch saw neither.
func (p PodSeen) Ended() time.Time {
	switch {
	case p.Finished.IsZero():
		return p.Deleting
	case p.Deleting.IsZero() || p.Finished.Before(p.Deleting):
		return p.Finished
	}
	return p.Deleting
}

// PodLog is the pods of one job in one member, as a watch saw them from its start on.
type PodLog struct {
	mu   sync.Mutex
	pods map[string]PodSeen
}

// Seen is every pod the watch saw so far, by name.
func (l *PodLog) Seen() map[string]PodSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.pods)
}

// WatchPods logs the pods matching selector in namespace of cluster c from now until the
// test ends. A deleted pod vanishes from the API server, and with it its deletion
// timestamp, so only a watch running at the time sees it.
func WatchPods(t testing.TB, c *Cluster, namespace, selector string) *PodLog {
	t.Helper()
	w, err := c.Clientset.CoreV1().Pods(namespace).Watch(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	l := &PodLog{pods: map[string]PodSeen{}}
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				l.observe(p)
			}
		}
	}()
	return l
}

func (l *PodLog) observe(p *corev1.Pod) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.pods[p.Name]
	seen.Created = p.CreationTimestamp.Time
	seen.Index = p.Annotations[musterv1.GlobalIndexAnnotation]
	if ref := metav1.GetControllerOf(p); ref != nil {
		seen.Job = ref.Name
	}
	if p.DeletionTimestamp != nil {
		seen.Deleting = p.DeletionTimestamp.Time
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Terminated != nil {
			seen.Finished = c.State.Terminated.FinishedAt.Time
		}
	}
	l.pods[p.Name] = seen
}

// Copy is one fleet index of a job run twice: in a member cut off from the hub, and again
// in the member a part of the job moved to.
type Copy struct {
	Index         string
	CutOff, Moved PodSeen
}

// Copies pairs, by fleet index, the pods of job seen in the cut-off member with the pods
// of the parts moved to another member: those whose Job is not job's own shard.
func Copies(job string, cutOff, moved map[string]PodSeen) []Copy {
	var out []Copy
	for _, old := range cutOff {
		for _, p := range moved {
			if p.Index == old.Index && p.Job != job {
				out = append(out, Copy{Index: old.Index, CutOff: old, Moved: p})
			}
		}
	}
	return out
}

// Overlap is how long the two copies could run at once, from the moved one's creation to
// the cut-off one's end; negative, the gap between them. ok is false when the cut-off
// copy's end was not seen.
func (c Copy) Overlap() (overlap time.Duration, ok bool) {
	end := c.CutOff.Ended()
	if end.IsZero() {
		return 0, false
	}
	return end.Sub(c.Moved.Created), true
}

// Describe is the copy's timeline relative to cut, for a test's log.
func (c Copy) Describe(cut time.Time) string {
	rel := func(at time.Time) string {
		if at.IsZero() {
			return "-"
		}
		return at.Sub(cut).Round(time.Second).String()
	}
	verdict := "no end seen"
	if d, ok := c.Overlap(); ok && d > 0 {
		verdict = "overlap " + d.Round(time.Second).String()
	} else if ok {
		verdict = "gap " + (-d).Round(time.Second).String()
	}
	return fmt.Sprintf("fleet index %s ran in the cut-off member from %s to %s after the cut (finished %s, deleted %s) and in the other from %s: %s",
		c.Index, rel(c.CutOff.Created), rel(c.CutOff.Ended()), rel(c.CutOff.Finished), rel(c.CutOff.Deleting), rel(c.Moved.Created), verdict)
}

// Fenced checks that no fleet index of job ran in two members at once: every pod the
// cut-off member ran was deleted, and its grace period over, before the first pod of a
// part moved elsewhere was created. It returns the gap between the two on success.
func Fenced(job string, cutOff, moved map[string]PodSeen) (time.Duration, error) {
	var lastGone, firstMoved time.Time
	for name, p := range cutOff {
		if p.Deleting.IsZero() {
			return 0, fmt.Errorf("%s: the cut-off member's pod %s (fleet index %s) was never deleted", job, name, p.Index)
		}
		if p.Deleting.After(lastGone) {
			lastGone = p.Deleting
		}
	}
	for _, p := range moved {
		if p.Job != job && (firstMoved.IsZero() || p.Created.Before(firstMoved)) {
			firstMoved = p.Created
		}
	}
	switch {
	case len(cutOff) == 0 || firstMoved.IsZero():
		return 0, fmt.Errorf("%s: saw %d pods in the cut-off member and a moved one at %v; want both", job, len(cutOff), firstMoved)
	case !lastGone.Before(firstMoved):
		return 0, fmt.Errorf("%s: the cut-off member's last pod could run until %s, the moved part's first was created at %s: two copies at once",
			job, lastGone.Format(stampMilli), firstMoved.Format(stampMilli))
	}
	return firstMoved.Sub(lastGone), nil
}

const stampMilli = "15:04:05.000"

// ExpectFenced logs the timeline of job's pods in the cut-off member and of the parts
// moved elsewhere, relative to cut, and fails t unless Fenced holds.
func ExpectFenced(t testing.TB, job string, cutOff, moved map[string]PodSeen, cut time.Time) {
	t.Helper()
	for _, p := range cutOff {
		t.Logf("%s: the cut-off member's pod for fleet index %s created %s, deleted (grace over) %s after the cut", job, p.Index,
			p.Created.Sub(cut).Round(time.Second), p.Deleting.Sub(cut).Round(time.Second))
	}
	for _, p := range moved {
		if p.Job != job {
			t.Logf("%s: the replacement for fleet index %s created %s after the cut", job, p.Index, p.Created.Sub(cut).Round(time.Second))
		}
	}
	gap, err := Fenced(job, cutOff, moved)
	if err != nil {
		t.Error(err)
		return
	}
	t.Logf("%s: gap between the cut-off member's last pod gone and the first replacement: %s", job, gap.Round(time.Second))
}

// LogCopies logs, for a note's timeline, each fleet index of job that ran both in the
// cut-off member and in a part moved elsewhere, relative to cut.
func LogCopies(t testing.TB, job string, cutOff, moved map[string]PodSeen, cut time.Time) {
	t.Helper()
	for _, c := range Copies(job, cutOff, moved) {
		t.Logf("%s: %s", job, c.Describe(cut))
	}
}
