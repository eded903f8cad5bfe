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
	// Clock times the renewals and stamps them; nil is the real clock. Tests inject a fake
	// one to step through intervals instead of sleeping them.
	Clock clock.Clock

	mu sync.Mutex
	// renewed is when the last renewal that succeeded was sent; started, when the renewer
	// started, stands for it until one has.
	renewed, started time.Time
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
	r.mu.Lock()
	r.started = r.clock().Now()
	r.mu.Unlock()
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

// Silence is how long the agent has gone without renewing its Lease: since it sent the
// last renewal that succeeded (the hub cannot have seen it earlier), or, before any, since
// the renewer started. It reads the clock's monotonic time, so a step in the time of day
// neither shortens nor lengthens it. Zero before the renewer starts.
func (r *Renewer) Silence() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	from := r.renewed
	if from.IsZero() {
		from = r.started
	}
	if from.IsZero() {
		return 0
	}
	return r.clock().Since(from)
}

func (r *Renewer) renew(ctx context.Context, sent time.Time) error {
	leases := r.Hub.CoordinationV1().Leases(musterv1.MemberNamespace(r.Cluster))
	now := metav1.NewMicroTime(sent)
	lease, err := leases.Get(ctx, LeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: musterv1.MemberNamespace(r.Cluster)},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(r.Holder), RenewTime: &now, AcquireTime: &now,
				LeaseDurationSeconds: ptr.To(int32(r.Interval.Seconds())),
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("reading lease: %w", err)
	}
	lease.Spec.RenewTime = &now
	lease.Spec.HolderIdentity = ptr.To(r.Holder)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(r.Interval.Seconds()))
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}
