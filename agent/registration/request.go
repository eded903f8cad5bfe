package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate/csr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// maxRequestPoll is the longest pause between two reads of a pending request. The agent
// reads its request by name because neither of its identities may list or watch CSRs
// (that would show every cluster's), so it cannot wait on a watch.
const maxRequestPoll = 5 * time.Second

// errAskAgain: the pending request will never be issued (it is gone, denied or failed); a
// new request, with the same key, may be.
var errAskAgain = errors.New("the certificate request must be made again")

// requestCertificate asks the hub to sign a client certificate for the agent identity and
// waits for it. hub is the bootstrap client for a join and the agent's own client when
// renewing, with current the certificate that client presents: the hub approves a renewal
// only for the holder of the cluster's current certificate, and learns which one that is
// from the request. A request of the same kind made earlier and not yet answered is
// waited for first; seed, if set, is the key a join asks for.
func (r *Registrar) requestCertificate(ctx context.Context, hub kubernetes.Interface, hubURL string, ca []byte, cluster string, current *x509.Certificate, seed *ecdsa.PrivateKey) (*Credentials, error) {
	join := current == nil
	p, err := r.Store.ReadPending(ctx)
	if err != nil {
		return nil, err
	}
	if p != nil && (p.Join != join || (seed != nil && !p.Key.Equal(seed))) {
		// A rotation left pending when the agent lost its access is not a join (it renews
		// the revoked join), and a join for another key than the bound one would be denied.
		log.FromContext(ctx).Info("abandoning a pending certificate request of another kind", "request", p.Request, "join", p.Join)
		p = nil
	}
	if p == nil {
		if p, err = newPending(seed); err != nil {
			return nil, err
		}
		p.Join = join
	}
	var certPEM []byte
	if p.Request != "" {
		certPEM, err = waitForCertificate(ctx, hub, p.Request, p.Key)
		if err != nil && !errors.Is(err, errAskAgain) {
			return nil, err
		}
		if err != nil {
			log.FromContext(ctx).Info("asking again for a certificate", "why", err.Error())
		}
	}
	if certPEM == nil {
		if certPEM, err = r.ask(ctx, hub, cluster, current, p); err != nil {
			return nil, err
		}
	}
	keyDER, err := x509.MarshalECPrivateKey(p.Key)
	if err != nil {
		return nil, err
	}
	return &Credentials{
		HubURL: hubURL, CA: ca, ClusterName: cluster, CertPEM: certPEM,
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		IssuedAt: r.Now(),
	}, nil
}

func newPending(seed *ecdsa.PrivateKey) (*Pending, error) {
	if seed != nil {
		return &Pending{Key: seed}, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Pending{Key: key}, nil
}

// ask creates a certificate request for p's key and waits for its certificate. The
// request's name is recorded before the request exists, so that an agent stopped right
// after creating it waits for that one on its next start.
func (r *Registrar) ask(ctx context.Context, hub kubernetes.Interface, cluster string, current *x509.Certificate, p *Pending) ([]byte, error) {
	joinID, err := requestJoinID(cluster, current)
	if err != nil {
		return nil, err
	}
	name, err := requestName(cluster)
	if err != nil {
		return nil, err
	}
	p.Request = name
	if err := r.Store.WritePending(ctx, p); err != nil {
		return nil, err
	}
	request, err := identity.NewAgentRequest(cluster, joinID, p.Key)
	if err != nil {
		return nil, err
	}
	req := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{musterv1.ClusterNameLabel: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           request,
			SignerName:        certificatesv1.KubeAPIServerClientSignerName,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
			ExpirationSeconds: csr.DurationToExpirationSeconds(r.CertLifetime),
		},
	}
	if current != nil {
		req.Annotations = map[string]string{
			identity.CurrentCertificateAnnotation: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: current.Raw})),
		}
	}
	if _, err := hub.CertificatesV1().CertificateSigningRequests().Create(ctx, req, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the certificate request: %w", err)
	}
	return waitForCertificate(ctx, hub, name, p.Key)
}

// requestName names a request with 128 random bits: the agent reads its request by name,
// and no other cluster can guess it.
func requestName(cluster string) (string, error) {
	id, err := random128()
	if err != nil {
		return "", err
	}
	return "muster-" + cluster + "-" + id, nil
}

// requestJoinID is the join id a request asks for: a rotation keeps the one of the
// certificate it renews (the hub admits only the current join's certificates); each new
// join request has a fresh one, so that no certificate of an earlier join, whose access
// was revoked, shares it.
func requestJoinID(cluster string, current *x509.Certificate) (string, error) {
	if current == nil {
		return random128()
	}
	id, ok := identity.JoinIDOf(cluster, current.Subject.Organization)
	if !ok {
		return "", fmt.Errorf("the agent's certificate names no join of cluster %s (organizations %v): join again with a new join line", cluster, current.Subject.Organization)
	}
	return id, nil
}

// random128 is 128 random bits in lowercase hex.
func random128() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// waitForCertificate reads the request until it is issued, or will never be.
func waitForCertificate(ctx context.Context, hub kubernetes.Interface, name string, key *ecdsa.PrivateKey) ([]byte, error) {
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	want := identity.KeyFingerprint(spki)
	for interval := 250 * time.Millisecond; ; interval = min(2*interval, maxRequestPoll) {
		req, err := hub.CertificatesV1().CertificateSigningRequests().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("certificate request %s is gone: %w", name, errAskAgain)
		case err != nil:
			log.FromContext(ctx).V(1).Info("reading the certificate request", "name", name, "error", err.Error())
		default:
			if cert, err := issuedCertificate(req, want); cert != nil || err != nil {
				return cert, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for certificate request %s: %w", name, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// issuedCertificate reads a request's outcome: its certificate once issued, nothing while
// it is pending, and an error wrapping errAskAgain when it will never be issued for the key
// with fingerprint key.
func issuedCertificate(req *certificatesv1.CertificateSigningRequest, key string) ([]byte, error) {
	if got, err := identity.RequestKey(req); err != nil || got != key {
		return nil, fmt.Errorf("certificate request %s is not for the agent's key: %w", req.Name, errAskAgain)
	}
	approved := false
	for _, c := range req.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return nil, fmt.Errorf("certificate request %s: %s (%s): %s: %w", req.Name, c.Type, c.Reason, c.Message, errAskAgain)
		case certificatesv1.CertificateApproved:
			approved = true
		}
	}
	if approved && len(req.Status.Certificate) > 0 {
		return req.Status.Certificate, nil
	}
	return nil, nil
}
