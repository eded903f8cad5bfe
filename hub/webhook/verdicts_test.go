package webhook

import (
	"crypto/sha256"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/api/templates"
)

func TestPassedTemplatesExpireAndStayBounded(t *testing.T) {
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	p := newPassedTemplates(func() time.Time { return now })
	key := func(i int) [sha256.Size]byte { return sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16)}) }
	if p.seen(key(1)) {
		t.Fatal("seen before it passed")
	}
	p.pass(key(1))
	if !p.seen(key(1)) {
		t.Fatal("not seen right after it passed")
	}
	now = now.Add(passedFor)
	if p.seen(key(1)) {
		t.Errorf("still seen %s after it passed", passedFor)
	}
	for i := range 3 * maxPassed {
		now = now.Add(time.Millisecond)
		p.pass(key(i))
		if len(p.passed) > maxPassed {
			t.Fatalf("%d verdicts kept, more than %d", len(p.passed), maxPassed)
		}
	}
	if !p.seen(key(3*maxPassed - 1)) {
		t.Error("the newest verdict was forgotten")
	}
	var none *passedTemplates
	none.pass(key(1))
	if none.seen(key(1)) {
		t.Error("a nil cache remembered a verdict")
	}
}

// The key keeps what the API server's verdict depends on, and only that.
func TestDryRunKeyKeepsWhatTheVerdictDependsOn(t *testing.T) {
	job := func(name string, uid types.UID, image string) *batchv1.Job {
		return templates.Job(name, "", uid, &batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: image}},
		}}}})
	}
	key := func(j *batchv1.Job) [sha256.Size]byte {
		k, err := dryRunKey(j)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(job("nightly-29929537", "uid-1", "busybox"))
	for _, c := range []struct {
		name string
		job  *batchv1.Job
		same bool
	}{
		{"another name of the same length", job("nightly-29929538", "uid-1", "busybox"), true},
		{"another owner", job("nightly-29929537", "uid-2", "busybox"), true},
		{"a longer name", job("nightly-299295370", "uid-1", "busybox"), false},
		{"a dot in the name", job("nightly.29929537", "uid-1", "busybox"), false},
		{"another image", job("nightly-29929537", "uid-1", "nginx"), false},
	} {
		if got := key(c.job) == base; got != c.same {
			t.Errorf("%s: same key = %v, want %v", c.name, got, c.same)
		}
	}
}
