package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate/csr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	hubregistration "github.com/musterhq/muster/hub/registration"
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
		if cert, err := stored.Certificate(); err == nil && usable(cert.Leaf, stored.IssuedAt, r.Now()) {
			return stored, r.Store.DeleteBootstrap(ctx)
		}
	}
	boot, err := r.Store.ReadBootstrap(ctx)
	if err != nil {
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
	creds, err := r.requestCertificate(ctx, hub, boot.HubURL, boot.CA, boot.ClusterName, nil)
	if err != nil {
		return nil, err
	}
	if err := r.Store.WriteCredentials(ctx, creds); err != nil {
		return nil, err
	}
	return creds, r.Store.DeleteBootstrap(ctx)
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

// requestCertificate makes a new key, asks the hub to sign a client certificate for the
// agent identity and waits for it. hub is the bootstrap client on first join and the
// agent's own client when renewing, with current the certificate that client presents:
// the hub approves a renewal only for the holder of the cluster's current certificate,
// and learns which one that is from the request.
func (r *Registrar) requestCertificate(ctx context.Context, hub kubernetes.Interface, hubURL string, ca []byte, cluster string, current *x509.Certificate) (*Credentials, error) {
	var key *ecdsa.PrivateKey
	var err error
	if current == nil {
		key, err = r.Store.JoinKey(ctx)
	} else {
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
		CommonName:   hubregistration.AgentUser(cluster),
		Organization: []string{hubregistration.MembersGroup, hubregistration.ClusterGroup(cluster)},
	}}, key)
	if err != nil {
		return nil, err
	}
	req := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "muster-" + cluster + "-", Labels: map[string]string{hubregistration.ClusterLabel: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			ExpirationSeconds: csr.DurationToExpirationSeconds(r.CertLifetime),
		},
	}
	if current != nil {
		req.Annotations = map[string]string{
			hubregistration.CurrentCertificateAnnotation: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: current.Raw})),
		}
	}
	created, err := hub.CertificatesV1().CertificateSigningRequests().Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the certificate request: %w", err)
	}
	certPEM, err := csr.WaitForCertificate(ctx, hub, created.Name, created.UID)
	if err != nil {
		return nil, fmt.Errorf("waiting for certificate request %s: %w", created.Name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Credentials{
		HubURL: hubURL, CA: ca, ClusterName: cluster, CertPEM: certPEM,
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		IssuedAt: r.Now(),
	}, nil
}
