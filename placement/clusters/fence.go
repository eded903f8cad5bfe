package clusters

import "time"

// Fencing keeps the two copies of fenced work apart: work whose Job template says
// podReplacementPolicy: Failed ("no replacement before the old pod is gone") is stopped
// by its own agent once the agent has gone After without renewing its hub Lease, and
// the hub moves it only later, Margin after that on the hub's own clock. The hub taints
// a cluster unreachable Grace after the last renewal it saw and moves its work the
// toleration after that, so After is Grace + toleration − Margin.
//
// Each side measures on its own monotonic clock from the same renewal (the agent from
// when it sent it, the hub from when it saw it, never earlier), so no clock has to agree
// with another on the time of day. Margin must cover what happens between the agent's
// deadline and the pods being gone: its reaction (a round of the Job controller, under a
// second), the pods' termination grace period, and the difference in the two clocks'
// rates over After (a quartz clock off by 100 ppm loses 0.03 s in 300 s).
type Fencing struct {
	// Grace is the hub's --cluster-grace-period.
	Grace time.Duration
	// Margin is the hub's --fencing-margin.
	Margin time.Duration
}

// MinFenceAfter is the shortest time an agent goes without renewing before it stops
// fenced work: a few missed renewals (every 10 s by default) must not stop it.
const MinFenceAfter = 20 * time.Second

// DefaultFencingMargin covers the default termination grace period of a pod (30 s) and
// as much again for the agent to act and the clocks to differ.
const DefaultFencingMargin = 60 * time.Second

// defaultPodGrace is a pod's termination grace period when its spec sets none, the part of
// DefaultFencingMargin that waits for pods to stop.
const defaultPodGrace = 30 * time.Second

// ForPods is f for work whose pods take up to grace to stop once their agent fences them:
// the margin waits that long, plus what the hub's margin leaves beyond a default pod's
// grace for the agent to act and the clocks to differ. A margin of the default 30 s grace
// would let the hub start a replacement while a pod with 120 s to stop still runs.
func (f Fencing) ForPods(grace time.Duration) Fencing {
	slack := max(f.Margin-defaultPodGrace, 0)
	f.Margin = max(f.Margin, grace+slack)
	return f
}

// Plan returns, for work that tolerates the unreachable taint for toleration, when its
// agent stops it (After, of silence) and the toleration the hub applies instead, which is
// longer where toleration is too short to leave the agent MinFenceAfter.
func (f Fencing) Plan(toleration time.Duration) (after, tolerate time.Duration) {
	tolerate = max(toleration, MinFenceAfter+f.Margin-f.Grace)
	return f.Grace + tolerate - f.Margin, tolerate
}

// Tolerate is the least toleration of the unreachable taint that keeps work whose agent
// stops it after of silence on its cluster the margin longer: what the hub holds to for
// work placed with that fence, whatever its tolerations or the hub's flags became since.
func (f Fencing) Tolerate(after time.Duration) time.Duration {
	return max(after+f.Margin-f.Grace, 0)
}
