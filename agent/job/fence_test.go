package job

import (
	"testing"
	"time"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/builders"
)

func TestFenceOfFailsAJobOnlyPastItsFence(t *testing.T) {
	fenced := func(after string) *builders.JobBuilder {
		return builders.MakeJob("j", "ns").Annotation(musterv1.FenceAfterAnnotation, after)
	}
	for _, tc := range []struct {
		name     string
		job      *builders.JobBuilder
		silence  time.Duration
		wantEnd  bool
		wantLeft time.Duration
	}{
		{name: "no fence: never, and no need to look again", job: builders.MakeJob("j", "ns"), silence: time.Hour},
		{name: "within the fence: look again when it falls due", job: fenced("280s"), silence: 30 * time.Second, wantLeft: 250*time.Second + time.Millisecond},
		{name: "at the fence: not yet", job: fenced("280s"), silence: 280 * time.Second, wantLeft: time.Millisecond},
		{name: "past the fence: the job ends", job: fenced("280s"), silence: 281 * time.Second, wantEnd: true},
		{name: "a suspended job runs nothing to fence", job: fenced("280s").Suspend(true), silence: time.Hour},
		{name: "a fence that does not parse is none", job: fenced("soon"), silence: time.Hour},
		{name: "a fence of zero is none", job: fenced("0s"), silence: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fenceOf(tc.job.Obj(), tc.silence)
			if (got.message != "") != tc.wantEnd || got.left != tc.wantLeft {
				t.Errorf("fenceOf after %s of silence = %+v; want an end %v, a look again in %s", tc.silence, got, tc.wantEnd, tc.wantLeft)
			}
		})
	}
}
