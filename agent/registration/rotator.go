package registration

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Rotator renews the agent's certificate when 20% of its lifetime remains. It runs as a
// manager runnable on the elected agent.
type Rotator struct {
	Registrar *Registrar
	Holder    *CertHolder
	// Hub is a client that authenticates with the holder's certificate.
	Hub         kubernetes.Interface
	Credentials *Credentials
	// Rotated, if set, is called after every rotation (tests count them).
	Rotated func(notAfter time.Time)
}

// Start renews certificates until ctx ends.
func (r *Rotator) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("cert-rotator")
	for {
		deadline := RotationDeadline(r.Holder.Current().Leaf, r.Credentials.IssuedAt)
		wait := time.Until(deadline)
		logger.V(1).Info("next certificate rotation", "at", deadline)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		if err := r.rotate(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			logger.Error(err, "rotating the hub certificate failed; the old one stays in use")
		}
	}
}

// rotate requests a certificate with the current identity and swaps it in, retrying with
// backoff until one is issued or ctx ends.
func (r *Rotator) rotate(ctx context.Context) error {
	return wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: 30 * time.Second}, func(ctx context.Context) (bool, error) {
		// A retry waits for the request already made (the hub may have approved it and
		// bound its key) instead of asking with another key, which the hub would deny.
		creds, err := r.Registrar.requestCertificate(ctx, r.Hub, r.Credentials.HubURL, r.Credentials.CA, r.Credentials.ClusterName, r.Holder.Current().Leaf, nil)
		if err != nil {
			log.FromContext(ctx).Error(err, "requesting a renewed certificate")
			return false, nil
		}
		cert, err := creds.Certificate()
		if err != nil {
			return false, fmt.Errorf("the hub issued an unusable certificate: %w", err)
		}
		if err := r.Registrar.store(ctx, creds); err != nil {
			log.FromContext(ctx).Error(err, "storing the renewed certificate")
			return false, nil
		}
		r.Credentials = creds
		r.Holder.Replace(cert)
		log.FromContext(ctx).Info("rotated the hub certificate", "notAfter", cert.Leaf.NotAfter)
		if r.Rotated != nil {
			r.Rotated(cert.Leaf.NotAfter)
		}
		return true, nil
	})
}
