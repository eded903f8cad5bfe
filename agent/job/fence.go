package job

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// A shard Job whose template says podReplacementPolicy: Failed carries the hub's fence
// (musterv1.FenceAfterAnnotation): the agent, cut off from the hub for that long, ends the
// Job with reason Fenced and stops its pods, because the hub may run the shard elsewhere
// only later. Ending the Job, rather than pausing it, keeps the decision across agent
// restarts and a partition that heals: the hub, seeing a Fenced shard, places its
// unfinished part again, and nothing here starts a pod the hub may have placed elsewhere.

// fence is what the hub's fence means for a Job at one instant.
type fence struct {
	// message, when set, ends the Job: the agent lost the hub for longer than the fence.
	message string
	// left is how much longer the agent may go without renewing before it does; zero when
	// the Job has no fence or is fenced already.
	left time.Duration
}

// fenceOf applies the fence job carries to silence, how long the agent has gone without
// renewing its hub Lease. A suspended Job runs no pod and is left alone; a fence that does
// not parse as a positive duration is none (the hub writes it: there is nothing to keep
// apart then).
func fenceOf(job *batchv1.Job, silence time.Duration) fence {
	v, ok := job.Annotations[musterv1.FenceAfterAnnotation]
	if !ok || suspended(job) {
		return fence{}
	}
	after, err := time.ParseDuration(v)
	if err != nil || after <= 0 {
		return fence{}
	}
	if silence <= after {
		// Look again just after the fence falls due: renewals push it back meanwhile.
		return fence{left: after - silence + time.Millisecond}
	}
	return fence{message: fmt.Sprintf("the agent has not reached the hub for %s, longer than the %s the shard's fence allows: its pods stop so that the hub may run it elsewhere, never in two clusters at once",
		silence.Round(time.Second), after)}
}
