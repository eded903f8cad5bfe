// Package heartbeat renews the agent's Lease in its hub namespace, the signal by which the
// hub judges the cluster reachable (see hub/health).
package heartbeat

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// LeaseName is the Lease the hub watches.
const LeaseName = "muster-agent"

// Renewer renews the Lease every Interval.
type Renewer struct {
	Hub      kubernetes.Interface
	Cluster  string
	Holder   string
	Interval time.Duration
	// Checkpoint, when set, keeps the time of the last renewal that succeeded in the
	// member, so that an agent restarted while cut off from the hub counts its Silence
	// from then rather than from its start.
	Checkpoint *Checkpoint
	// Clock times the renewals and stamps them; nil is the real clock. Tests inject a fake
	// one to step through intervals instead of sleeping them.
	Clock clock.Clock

	mu sync.Mutex
	// renewed is when the last renewal that succeeded was sent; started, when the renewer
	// started, stands for it until one has.
	renewed, started time.Time
	// written is the Lease as the last write that succeeded returned it: the next renewal
	// updates it without reading it. Only Start's loop uses it.
	written *coordinationv1.Lease
}

func (r *Renewer) clock() clock.Clock {
	if r.Clock == nil {
		return clock.RealClock{}
	}
	return r.Clock
}

// retryInterval spaces renewals after a failure, so that a hub that comes back (or RBAC
// that appears just after the agent's certificate) is noticed well within the interval.
const retryInterval = time.Second

// Start renews until ctx ends. A failed renewal is logged and retried after a second: the
// hub notices only when renewals stop for its whole grace period.
func (r *Renewer) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("heartbeat")
	r.Restore(ctx)
	for {
		next := r.Interval
		sent := r.clock().Now()
		if err := r.renew(ctx, sent); err != nil {
			logger.Error(err, "renewing the hub lease")
			next = retryInterval
		} else {
			r.mu.Lock()
			r.renewed = sent
			r.mu.Unlock()
			if r.Checkpoint != nil {
				if err := r.Checkpoint.save(ctx, sent); err != nil {
					logger.Error(err, "recording in the member when the agent last reached the hub")
				}
			}
		}
		timer := r.clock().NewTimer(next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		}
	}
}

// restoreTimeout bounds the read of Checkpoint when Silence is first asked for.
const restoreTimeout = 10 * time.Second

// Restore starts the count of Silence, from the last renewal an earlier agent recorded in
// Checkpoint, or from now: an agent restarted while cut off, or a replica that just took
// over as leader, goes on from the silence of the one before. The first of Start and
// Silence calls it, on the leader, so that no controller takes an agent that has not
// reached the hub for a just-renewed one; a standby's start long ago does not count.
func (r *Renewer) Restore(ctx context.Context) {
	r.mu.Lock()
	restored := !r.started.IsZero()
	r.mu.Unlock()
	if restored {
		return
	}
	start := r.clock().Now()
	var last time.Time
	if r.Checkpoint != nil {
		var err error
		if last, err = r.Checkpoint.load(ctx); err != nil {
			log.FromContext(ctx).WithName("heartbeat").Error(err, "reading when the agent last reached the hub; its silence counts from its start")
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started.IsZero() {
		return // restored meanwhile by the other caller
	}
	r.started = start
	if !last.IsZero() && last.Before(start) {
		// Wall-clock time from an earlier process: its silence goes on from there.
		r.renewed = last
	}
}

// Silence is how long the agent has gone without renewing its Lease: since it sent the
// last renewal that succeeded (the hub cannot have seen it earlier), or, before any, since
// Restore, which it calls first if nothing has. Within one process it reads the clock's
// monotonic time, so a step in the time of day neither shortens nor lengthens it.
func (r *Renewer) Silence() time.Duration {
	r.mu.Lock()
	restored := !r.started.IsZero()
	r.mu.Unlock()
	if !restored {
		// Once per leader: every fenced Job's round asks.
		ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
		r.Restore(ctx)
		cancel()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	from := r.renewed
	if from.IsZero() {
		from = r.started
	}
	return r.clock().Since(from)
}

// renew writes sent into the Lease. After a write that succeeded it updates the Lease
// that write returned, without reading it first, as the kubelet renews its node Lease: a
// renewal is then one request, not two, and a thousand agents send half the requests. A
// conflict or a Lease gone (someone else wrote or deleted it) reads it afresh in the same
// pass; any other failure reads it afresh at the next.
func (r *Renewer) renew(ctx context.Context, sent time.Time) error {
	leases := r.Hub.CoordinationV1().Leases(musterv1.MemberNamespace(r.Cluster))
	now := metav1.NewMicroTime(sent)
	if lease := r.written; lease != nil {
		r.written = nil
		// An update of a Lease deleted since answers Conflict (the UID it carries no longer
		// exists), so the read below finds it gone and makes a new one with a new acquire
		// time, rather than the update bringing the old one back.
		err := r.update(ctx, leases, lease, now)
		if err == nil || (!apierrors.IsConflict(err) && !apierrors.IsNotFound(err)) {
			return err
		}
	}
	lease, err := leases.Get(ctx, LeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		created, err := leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: musterv1.MemberNamespace(r.Cluster)},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(r.Holder), RenewTime: &now, AcquireTime: &now,
				LeaseDurationSeconds: ptr.To(int32(r.Interval.Seconds())),
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating lease: %w", err)
		}
		r.written = created
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading lease: %w", err)
	}
	return r.update(ctx, leases, lease, now)
}

// update writes lease as renewed by this agent at now and keeps what the write returned.
func (r *Renewer) update(ctx context.Context, leases coordinationv1client.LeaseInterface, lease *coordinationv1.Lease, now metav1.MicroTime) error {
	lease.Spec.RenewTime = &now
	lease.Spec.HolderIdentity = ptr.To(r.Holder)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(r.Interval.Seconds()))
	updated, err := leases.Update(ctx, lease, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("renewing lease: %w", err)
	}
	r.written = updated
	return nil
}

// CheckpointName is the Lease, in the agent's namespace of its member, whose renewTime is
// when the agent last reached the hub.
const CheckpointName = "muster-agent-hub-renewal"

// Checkpoint keeps when the agent last reached the hub in a Lease of its member, which it
// reaches when cut off from the hub. A time read back from it is of the wall clock: an
// earlier process's monotonic clock is gone.
type Checkpoint struct {
	Member    kubernetes.Interface
	Namespace string
}

// load returns the time recorded; zero when none is.
func (c *Checkpoint) load(ctx context.Context) (time.Time, error) {
	lease, err := c.Member.CoordinationV1().Leases(c.Namespace).Get(ctx, CheckpointName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("reading lease %s/%s: %w", c.Namespace, CheckpointName, err)
	}
	if lease.Spec.RenewTime == nil {
		return time.Time{}, nil
	}
	return lease.Spec.RenewTime.Time, nil
}

// save records t.
func (c *Checkpoint) save(ctx context.Context, t time.Time) error {
	leases := c.Member.CoordinationV1().Leases(c.Namespace)
	stamp := metav1.NewMicroTime(t)
	lease, err := leases.Get(ctx, CheckpointName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: CheckpointName, Namespace: c.Namespace},
			Spec:       coordinationv1.LeaseSpec{RenewTime: &stamp},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("reading lease %s/%s: %w", c.Namespace, CheckpointName, err)
	}
	lease.Spec.RenewTime = &stamp
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating lease %s/%s: %w", c.Namespace, CheckpointName, err)
	}
	return nil
}
