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

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// ClusterIDAnnotation on a MemberCluster records the UID of the member's kube-system
// namespace, so that a second cluster cannot take over a name already in use.
const ClusterIDAnnotation = "muster.dev/cluster-id"

// Registrar obtains and renews the agent's hub certificate.
type Registrar struct {
	Store *Store
	// Member is the member cluster's client, used to find its cluster ID.
	Member kubernetes.Interface
	// CertLifetime is requested for each certificate; the hub's signer may shorten it.
	CertLifetime time.Duration
	Now          func() time.Time
}

// EnsureCredentials returns usable stored credentials, or registers with the bootstrap
// token and waits until the hub issues a certificate (after `musterctl accept`).
func (r *Registrar) EnsureCredentials(ctx context.Context) (*Credentials, error) {
	stored, err := r.Store.ReadCredentials(ctx)
	if err != nil {
		return nil, err
	}
	if stored != nil {
		if cert, err := stored.Certificate(); err == nil && usable(cert.Leaf, r.Now()) {
			// One that is due for renewal is used too, and the rotator renews it at once:
			// the bootstrap Secret is gone after the join, so falling back to it would leave
			// an agent restarted late in its certificate's life with no identity at all.
			return stored, r.Store.DeleteBootstrap(ctx)
		}
	}
	boot, err := r.Store.ReadBootstrap(ctx)
	if err != nil {
		if stored != nil {
			return nil, fmt.Errorf("the stored hub certificate has expired; re-join with a new token (musterctl token create --cluster NAME, then musterctl join) and run musterctl accept NAME: %w", err)
		}
		return nil, err
	}
	cfg := BootstrapConfig(boot)
	if err := r.registerCluster(ctx, boot); err != nil {
		return nil, err
	}
	hub, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("requesting a hub certificate; waiting for `musterctl accept`", "cluster", boot.ClusterName)
	// A re-join after the stored certificate expired asks for that certificate's key, which
	// the hub has bound to the cluster: `musterctl accept` approves it without --rekey.
	var seed *ecdsa.PrivateKey
	if stored != nil {
		seed, _ = stored.PrivateKey()
	}
	creds, err := r.requestCertificate(ctx, hub, boot.HubURL, boot.CA, boot.ClusterName, nil, seed)
	if err != nil {
		return nil, err
	}
	if err := r.store(ctx, creds); err != nil {
		return nil, err
	}
	return creds, r.Store.DeleteBootstrap(ctx)
}

// store keeps credentials the hub issued and forgets the request they answer.
func (r *Registrar) store(ctx context.Context, creds *Credentials) error {
	if err := r.Store.WriteCredentials(ctx, creds); err != nil {
		return err
	}
	return r.Store.DeletePending(ctx)
}

// registerCluster creates the MemberCluster, or checks that an existing one is this
// cluster's.
func (r *Registrar) registerCluster(ctx context.Context, boot *Bootstrap) error {
	id, err := ClusterID(ctx, r.Member)
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
		if err := hub.Get(ctx, types.NamespacedName{Name: boot.ClusterName}, mc); err != nil {
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

// ClusterID identifies a member cluster by the UID of its kube-system namespace.
func ClusterID(ctx context.Context, member kubernetes.Interface) (string, error) {
	ns, err := member.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the cluster ID (kube-system's UID): %w", err)
	}
	return string(ns.UID), nil
}
