package registration

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
	"github.com/musterhq/muster/internal/memberid"
)

// ClusterIDAnnotation on a MemberCluster records the UID of the member's kube-system
// namespace, so that a second cluster cannot take over a name already in use.
const ClusterIDAnnotation = identity.ClusterIDAnnotation

// Registrar obtains and renews the agent's hub certificate.
type Registrar struct {
	Store *Store
	// Member is the member cluster's client, used to find its cluster ID.
	Member kubernetes.Interface
	// CertLifetime is requested for each certificate; the hub's signer may shorten it.
	CertLifetime time.Duration
	// RefusalSettle is how long the hub must refuse the stored certificate before a new
	// join line is used (RefusalSettle when zero).
	RefusalSettle time.Duration
	Now           func() time.Time
}

// EnsureCredentials returns usable stored credentials, or joins with the bootstrap token
// and waits until the hub issues a certificate (after `musterctl accept`). A bootstrap
// Secret beside usable credentials is a new join line (`musterctl join` again): it is used
// only if the hub refuses the stored certificate (its cluster was denied, and accepted
// again), and forgotten otherwise.
func (r *Registrar) EnsureCredentials(ctx context.Context) (*Credentials, error) {
	stored, err := r.Store.ReadCredentials(ctx)
	if err != nil {
		return nil, err
	}
	usableStored := false
	if stored != nil {
		// One that is due for renewal is usable too, and the rotator renews it at once:
		// the bootstrap Secret is gone after the join, so falling back to it would leave
		// an agent restarted late in its certificate's life with no identity at all.
		cert, err := stored.Certificate()
		usableStored = err == nil && usable(cert.Leaf, r.Now())
	}
	boot, err := r.Store.ReadBootstrap(ctx)
	switch {
	case usableStored && apierrors.IsNotFound(err):
		return stored, nil
	case usableStored:
		if rejoin, why := r.rejoinWanted(ctx, stored, boot, err); !rejoin {
			log.FromContext(ctx).V(1).Info("using the stored hub certificate", "why", why)
			return stored, nil
		}
		log.FromContext(ctx).Info("the hub refuses the stored certificate and a new join line is installed: joining again", "cluster", boot.ClusterName)
	case err != nil && stored != nil:
		return nil, fmt.Errorf("the stored hub certificate has expired; re-join with a new token (musterctl token create --cluster NAME, then musterctl join) and run musterctl accept NAME: %w", err)
	case err != nil:
		return nil, err
	}
	return r.join(ctx, boot, stored)
}

// rejoinWanted decides, for usable stored credentials, whether the bootstrap Secret read
// with bootErr asks for a new join: only when the hub refuses the stored certificate. A
// bootstrap Secret the certificate makes unnecessary is deleted; one whose need cannot be
// told now (the hub is unreachable) is kept for the Rejoiner to decide later.
func (r *Registrar) rejoinWanted(ctx context.Context, stored *Credentials, boot *Bootstrap, bootErr error) (bool, string) {
	if bootErr != nil {
		return false, "the bootstrap Secret is unreadable: " + bootErr.Error()
	}
	hub, err := credentialsClient(stored)
	if err == nil {
		var refused bool
		if refused, err = LastingRefusal(ctx, hub, stored.ClusterName, r.RefusalSettle); err == nil && refused {
			return true, ""
		}
	}
	if err != nil {
		return false, "cannot tell whether the hub accepts it: " + err.Error()
	}
	if err := r.Store.DeleteBootstrap(ctx, boot); err != nil {
		return false, err.Error()
	}
	return false, "the hub accepts it; the bootstrap Secret is no longer needed"
}

// join registers the cluster with the bootstrap token and asks for the certificate of a
// new join.
func (r *Registrar) join(ctx context.Context, boot *Bootstrap, stored *Credentials) (*Credentials, error) {
	if len(boot.CA) == 0 {
		ca, err := discoverCA(ctx, boot)
		if err != nil {
			return nil, err
		}
		boot.CA = ca
	}
	if err := r.registerCluster(ctx, boot); err != nil {
		return nil, err
	}
	hub, err := kubernetes.NewForConfig(BootstrapConfig(boot))
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("requesting a hub certificate; waiting for `musterctl accept`", "cluster", boot.ClusterName)
	seed, err := r.joinKey(ctx, hub, stored)
	if err != nil {
		return nil, err
	}
	creds, err := r.requestCertificate(ctx, hub, boot.HubURL, boot.CA, boot.ClusterName, nil, seed)
	if err != nil {
		return nil, err
	}
	if err := r.store(ctx, creds); err != nil {
		return nil, err
	}
	return creds, r.Store.DeleteBootstrap(ctx, boot)
}

// joinKey is the key a join of an agent that held a certificate asks for: the key the hub
// has bound the cluster to, which `musterctl accept` approves without --rekey. That is the
// stored certificate's key, unless a rotation was approved (which moved the binding to its
// key) and its certificate never stored. A first join (no stored credentials) gets nil: a
// fresh key, or the one of the join it is already waiting for.
func (r *Registrar) joinKey(ctx context.Context, hub kubernetes.Interface, stored *Credentials) (*ecdsa.PrivateKey, error) {
	if stored == nil {
		return nil, nil
	}
	key, err := stored.PrivateKey()
	if err != nil {
		// A damaged stored key is worth nothing: the join asks with a new one.
		return nil, nil
	}
	p, err := r.Store.ReadPending(ctx)
	if err != nil || p == nil || p.Join || p.Request == "" {
		return key, err
	}
	// A request gone or unreadable shows nothing: the binding stays the stored key's.
	req, err := hub.CertificatesV1().CertificateSigningRequests().Get(ctx, p.Request, metav1.GetOptions{})
	if err == nil && approvedFor(req, p.Key) {
		return p.Key, nil
	}
	return key, nil
}

// store keeps credentials the hub issued and forgets the request they answer.
func (r *Registrar) store(ctx context.Context, creds *Credentials) error {
	if err := r.Store.WriteCredentials(ctx, creds); err != nil {
		return err
	}
	return r.Store.DeletePending(ctx)
}

// registerCluster creates the MemberCluster, or checks that an existing one is this
// cluster's when the token may read it.
func (r *Registrar) registerCluster(ctx context.Context, boot *Bootstrap) error {
	id, err := memberid.ClusterID(ctx, r.Member)
	if err != nil {
		return err
	}
	hub, err := client.New(BootstrapConfig(boot), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: boot.ClusterName, Annotations: map[string]string{ClusterIDAnnotation: id}}}
	err = hub.Create(ctx, mc)
	if apierrors.IsAlreadyExists(err) {
		err := hub.Get(ctx, types.NamespacedName{Name: boot.ClusterName}, mc)
		if apierrors.IsForbidden(err) {
			// Only a token bound to this name may read the cluster. The check is a courtesy:
			// the hub approves a join only for the key the cluster is bound to.
			log.FromContext(ctx).Info("a cluster of this name is registered and the bootstrap token may not read it; joining it, for the hub to approve by key", "cluster", boot.ClusterName)
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading MemberCluster %s: %w", boot.ClusterName, err)
		}
		if got := mc.Annotations[ClusterIDAnnotation]; got != id {
			return fmt.Errorf("the hub already has a member cluster named %s with cluster ID %q; this cluster's ID is %q: choose another --cluster-name", boot.ClusterName, got, id)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("registering MemberCluster %s: %w", boot.ClusterName, err)
	}
	return nil
}

// discoveryTimeout bounds the wait for the hub's control plane to sign cluster-info with a
// token just created.
const discoveryTimeout = 30 * time.Second

// discoverCA learns the hub's CA for a bootstrap Secret that pins it by hash: from the
// hub's cluster-info, accepted only if the CA matches the pin and the token signed it.
func discoverCA(ctx context.Context, boot *Bootstrap) ([]byte, error) {
	token, err := bootstrap.ParseToken(boot.Token)
	if err != nil {
		return nil, fmt.Errorf("the bootstrap Secret's %s: %w", KeyToken, err)
	}
	hub, err := bootstrap.Discover(ctx, boot.HubURL, token, boot.CAHash, discoveryTimeout)
	if err != nil {
		return nil, fmt.Errorf("learning the hub's CA from its cluster-info (bootstrap Secret's %s %s): %w", KeyCAHash, boot.CAHash, err)
	}
	log.FromContext(ctx).Info("learned the hub's CA from its cluster-info; it matches the pinned hash", "caHash", boot.CAHash)
	return hub.CA, nil
}
