package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// RejoinPoll is how often the Rejoiner looks for a new join line.
const RejoinPoll = 10 * time.Second

// RefusalSettle is how long after a first refusal the agent reads its MemberCluster again
// before it believes the refusal. A kube-apiserver that has just started answers requests
// before its RBAC caches are filled, and denies them meanwhile: after a hub restart every
// agent would otherwise take that passing Forbidden for a revoked certificate and throw its
// identity away.
const RefusalSettle = 10 * time.Second

// ErrRejoin ends an agent that must join again: the hub refuses its certificate, and an
// administrator has installed a new join line. The agent restarts (its Deployment's pod
// does) and joins with the bootstrap token on start.
var ErrRejoin = errors.New("the hub refuses this agent's certificate and a new join line is installed: restarting to join again")

// Rejoiner watches for a new join line, which `musterctl join` leaves in the bootstrap
// Secret. After a deny, the hub never again accepts a certificate of the revoked join; the
// administrator readmits the cluster with a new join line and `musterctl accept`. While
// the hub accepts the agent's certificate, a new bootstrap Secret is deleted (the token is
// a liability once unused); when it refuses it, the Rejoiner stops the agent with
// ErrRejoin, as OCM's agent restarts when its bootstrap kubeconfig changes.
type Rejoiner struct {
	Store *Store
	// Hub reads the agent's own MemberCluster with its current certificate.
	Hub      client.Reader
	Cluster  string
	Interval time.Duration
	// Settle is how long a refusal must last to count (RefusalSettle when zero).
	Settle time.Duration
}

// Start polls until ctx ends or the agent must join again.
func (r *Rejoiner) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("rejoiner")
	ticker := time.NewTicker(r.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		rejoin, err := r.check(ctx)
		if err != nil {
			logger.Error(err, "checking for a new join line")
			continue
		}
		if rejoin {
			return ErrRejoin
		}
	}
}

// check says whether the agent must join again, deleting a bootstrap Secret it does not need.
func (r *Rejoiner) check(ctx context.Context) (bool, error) {
	boot, err := r.Store.ReadBootstrap(ctx)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	refused, err := LastingRefusal(ctx, r.Hub, r.Cluster, r.Settle)
	if err != nil || refused {
		return refused, err
	}
	log.FromContext(ctx).Info("a new join line is installed, but the hub accepts the agent's certificate: deleting it")
	return false, r.Store.DeleteBootstrap(ctx, boot)
}

// LastingRefusal says whether the hub refuses the agent's credentials (see Refused) twice,
// settle apart (RefusalSettle when zero): a refusal that passes is an API server warming
// up, not a revocation. It reads once when the first answer is not a refusal.
func LastingRefusal(ctx context.Context, hub client.Reader, cluster string, settle time.Duration) (bool, error) {
	if settle <= 0 {
		settle = RefusalSettle
	}
	refused, err := Refused(ctx, hub, cluster)
	if err != nil || !refused {
		return false, err
	}
	log.FromContext(ctx).V(2).Info("the hub refuses the agent's certificate; reading again before believing it", "after", settle)
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(settle):
	}
	return Refused(ctx, hub, cluster)
}

// Refused says whether the hub refuses the credentials hub authenticates with: it does not
// know them (Unauthorized: expired, or of another hub), or they reach not even the agent's
// own MemberCluster (Forbidden: revoked by a deny; NotFound: the cluster was unjoined).
// Any other error says nothing either way.
func Refused(ctx context.Context, hub client.Reader, cluster string) (bool, error) {
	return refusal(cluster, hub.Get(ctx, types.NamespacedName{Name: cluster}, &musterv1.MemberCluster{}))
}

// refusal reads the answer to the agent's read of its own MemberCluster (see Refused).
func refusal(cluster string, err error) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		return true, nil
	default:
		return false, fmt.Errorf("reading MemberCluster %s with the agent's certificate: %w", cluster, err)
	}
}

// credentialsClient is an uncached hub client that authenticates with creds, for reading
// the agent's MemberCluster only (it knows no other kind, and asks no discovery).
func credentialsClient(creds *Credentials) (client.Client, error) {
	cfg := &rest.Config{Host: creds.HubURL, Timeout: 10 * time.Second, TLSClientConfig: rest.TLSClientConfig{
		CAData: creds.CA, CertData: creds.CertPEM, KeyData: creds.KeyPEM,
	}}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(musterv1.GroupVersion.WithKind("MemberCluster"), meta.RESTScopeRoot)
	return client.New(cfg, client.Options{Scheme: scheme.Scheme, Mapper: mapper})
}

// approvedFor says whether req, a request for key, was approved: the approver then bound
// the cluster to key.
func approvedFor(req *certificatesv1.CertificateSigningRequest, key *ecdsa.PrivateKey) bool {
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return false
	}
	if got, err := identity.RequestKey(req); err != nil || got != identity.KeyFingerprint(spki) {
		return false
	}
	for _, c := range req.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
