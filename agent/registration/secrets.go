package registration

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/musterhq/muster/api/identity"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Names of the Secrets in the member's muster-agent namespace.
const (
	// BootstrapSecret is written by `musterctl join`.
	BootstrapSecret = identity.BootstrapSecret
	// CredentialsSecret holds the agent's key and hub certificate.
	CredentialsSecret = "muster-hub-credentials"
	// PendingSecret holds the key of a certificate request (join or rotation) the agent
	// has made and not yet received a certificate for, and the request's name. An agent
	// restarted meanwhile, or retrying, goes on waiting for that request rather than asking
	// again with a new key: the hub binds the cluster to the key of the request it approves,
	// so a second key would look like a competing join, or a rotation by an old certificate.
	PendingSecret = "muster-pending-request"
)

// Keys of both Secrets.
const (
	KeyHubURL      = identity.KeyHubURL
	KeyCA          = identity.KeyCA
	KeyCAHash      = identity.KeyCAHash
	KeyToken       = identity.KeyToken
	KeyClusterName = identity.KeyClusterName
	KeyTLSCert     = corev1.TLSCertKey
	KeyTLSKey      = corev1.TLSPrivateKeyKey
	KeyIssuedAt    = "issued-at"
	// KeyRequest names the pending certificate request.
	KeyRequest = "request"
	// KeyPurpose says whether the pending request is a join or a rotation.
	KeyPurpose = "purpose"
)

// Values of KeyPurpose.
const (
	purposeJoin     = "join"
	purposeRotation = "rotation"
)

// Bootstrap is what an agent needs to register.
type Bootstrap struct {
	HubURL string
	// CA is the hub's CA; empty when the Secret pins it by CAHash instead.
	CA          []byte
	CAHash      string
	Token       string
	ClusterName string
	// readVersion is the Secret's resourceVersion when read, and keep says a tool declares
	// it (KeepAnnotation): what DeleteBootstrap needs.
	readVersion string
	keep        bool
}

// Credentials are the agent's hub identity.
type Credentials struct {
	HubURL      string
	CA          []byte
	ClusterName string
	CertPEM     []byte
	KeyPEM      []byte
	// IssuedAt is when the agent received the certificate (see RotationDeadline).
	IssuedAt time.Time
}

// Certificate parses the key pair.
func (c *Credentials) Certificate() (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, err
	}
	pair.Leaf = leaf
	return &pair, nil
}

// Store reads and writes the agent's Secrets in the member cluster.
type Store struct {
	Client    kubernetes.Interface
	Namespace string
}

// ReadBootstrap reads the Secret written by `musterctl join`.
func (s *Store) ReadBootstrap(ctx context.Context) (*Bootstrap, error) {
	sec, err := s.Client.CoreV1().Secrets(s.Namespace).Get(ctx, BootstrapSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the bootstrap Secret %s/%s (did `musterctl join` run?): %w", s.Namespace, BootstrapSecret, err)
	}
	if used(sec) {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), BootstrapSecret)
	}
	b := &Bootstrap{
		HubURL: string(sec.Data[KeyHubURL]), CA: sec.Data[KeyCA], CAHash: string(sec.Data[KeyCAHash]),
		Token: string(sec.Data[KeyToken]), ClusterName: string(sec.Data[KeyClusterName]),
		readVersion: sec.ResourceVersion, keep: sec.Annotations[KeepAnnotation] == "true",
	}
	if b.HubURL == "" || (len(b.CA) == 0 && b.CAHash == "") || b.ClusterName == "" {
		return nil, fmt.Errorf("bootstrap Secret %s/%s lacks %s, %s (or %s) or %s", s.Namespace, BootstrapSecret, KeyHubURL, KeyCA, KeyCAHash, KeyClusterName)
	}
	return b, nil
}

// ReadCredentials returns the stored credentials, or nil when there are none.
func (s *Store) ReadCredentials(ctx context.Context) (*Credentials, error) {
	sec, err := s.Client.CoreV1().Secrets(s.Namespace).Get(ctx, CredentialsSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading credentials: %w", err)
	}
	issuedAt, _ := time.Parse(time.RFC3339, string(sec.Data[KeyIssuedAt]))
	return &Credentials{
		HubURL: string(sec.Data[KeyHubURL]), CA: sec.Data[KeyCA], ClusterName: string(sec.Data[KeyClusterName]),
		CertPEM: sec.Data[KeyTLSCert], KeyPEM: sec.Data[KeyTLSKey], IssuedAt: issuedAt,
	}, nil
}

// WriteCredentials stores credentials, creating the Secret on first use.
func (s *Store) WriteCredentials(ctx context.Context, c *Credentials) error {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: CredentialsSecret},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			KeyHubURL: []byte(c.HubURL), KeyCA: c.CA, KeyClusterName: []byte(c.ClusterName),
			KeyTLSCert: c.CertPEM, KeyTLSKey: c.KeyPEM, KeyIssuedAt: []byte(c.IssuedAt.UTC().Format(time.RFC3339)),
		},
	}
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	_, err := secrets.Update(ctx, sec, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("storing credentials: %w", err)
	}
	return nil
}

// KeepAnnotation "true" on a bootstrap Secret says a tool declares it (the muster-agent
// chart's bootstrap.keepSecret, on unless musterctl join renders it): deleted, it would
// only be made again, and `helm upgrade --wait` would wait for it forever.
const KeepAnnotation = "muster.dev/keep-join-line"

// UsedAnnotation on a kept bootstrap Secret holds the ID of the token the agent has used
// it with: the Secret is then a used join line, read as absent.
const UsedAnnotation = "muster.dev/join-line-used"

// DeleteBootstrap retires the bootstrap Secret read as read, once the agent holds a
// certificate (or needs none from it): the token is a liability once unused. One that
// `musterctl join` wrote is deleted; a kept one (KeepAnnotation) is annotated
// UsedAnnotation with its token's ID instead, and read as absent until it holds another
// token. Either is conditional on the version read: a join line written since (`musterctl
// join` again, or the tool with a new token, while this join waited for acceptance) stays,
// for the next check.
func (s *Store) DeleteBootstrap(ctx context.Context, read *Bootstrap) error {
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	var err error
	if read.keep {
		var patch []byte
		patch, err = json.Marshal(map[string]any{"metadata": map[string]any{
			"annotations":     map[string]string{UsedAnnotation: tokenID([]byte(read.Token))},
			"resourceVersion": read.readVersion,
		}})
		if err != nil {
			return err
		}
		_, err = secrets.Patch(ctx, BootstrapSecret, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		err = secrets.Delete(ctx, BootstrapSecret, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &read.readVersion}})
	}
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("retiring the used bootstrap Secret %s/%s: %w", s.Namespace, BootstrapSecret, err)
	}
	return nil
}

// used says whether sec is a join line the agent has used (see DeleteBootstrap).
func used(sec *corev1.Secret) bool {
	id := tokenID(sec.Data[KeyToken])
	return id != "" && sec.Annotations[UsedAnnotation] == id
}

// tokenID is the public part of a bootstrap token (id.secret).
func tokenID(token []byte) string {
	id, _, _ := strings.Cut(string(token), ".")
	return id
}

// Pending is a certificate request the agent made and has not yet received a certificate
// for. Request is empty until the request is created.
type Pending struct {
	Key     *ecdsa.PrivateKey
	Request string
	// Join: the request is a join (made with the bootstrap token, for a new join id), not
	// a rotation of the current certificate.
	Join bool
}

// ReadPending returns the pending request, or nil when there is none.
func (s *Store) ReadPending(ctx context.Context) (*Pending, error) {
	sec, err := s.Client.CoreV1().Secrets(s.Namespace).Get(ctx, PendingSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the pending certificate request: %w", err)
	}
	key, err := parseKey(sec.Data[KeyTLSKey])
	if err != nil {
		// A damaged key is worth nothing: the agent asks again with a new one.
		return nil, nil
	}
	return &Pending{Key: key, Request: string(sec.Data[KeyRequest]), Join: string(sec.Data[KeyPurpose]) == purposeJoin}, nil
}

// WritePending stores p, creating the Secret on first use.
func (s *Store) WritePending(ctx context.Context, p *Pending) error {
	der, err := x509.MarshalECPrivateKey(p.Key)
	if err != nil {
		return err
	}
	purpose := purposeRotation
	if p.Join {
		purpose = purposeJoin
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: PendingSecret},
		Data: map[string][]byte{
			KeyTLSKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}),
			KeyRequest: []byte(p.Request),
			KeyPurpose: []byte(purpose),
		},
	}
	secrets := s.Client.CoreV1().Secrets(s.Namespace)
	_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("storing the pending certificate request: %w", err)
	}
	return nil
}

// DeletePending forgets the pending request once its certificate is stored.
func (s *Store) DeletePending(ctx context.Context) error {
	err := s.Client.CoreV1().Secrets(s.Namespace).Delete(ctx, PendingSecret, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the pending certificate request: %w", err)
	}
	return nil
}

func parseKey(keyPEM []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

// PrivateKey parses the credentials' key.
func (c *Credentials) PrivateKey() (*ecdsa.PrivateKey, error) {
	return parseKey(c.KeyPEM)
}
