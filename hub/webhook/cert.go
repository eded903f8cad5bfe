package webhook

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Endpoint says where the API server reaches the webhook: at https://URLHost:Port when
// URLHost is set (the hub running as a process), else through Service in Namespace.
type Endpoint struct {
	Port      int
	URLHost   string
	Namespace string
}

// dnsNames are the names the serving certificate is for, the one the API server calls
// first. The certificate library issues DNS names only, so URLHost must be one (for a hub
// on the API server's machine, localhost); Validate says so.
func (e Endpoint) dnsNames() (string, []string) {
	if e.URLHost != "" {
		return e.URLHost, nil
	}
	svc := fmt.Sprintf("%s.%s.svc", ServiceName, e.Namespace)
	return svc, []string{ServiceName, fmt.Sprintf("%s.%s", ServiceName, e.Namespace)}
}

// Validate refuses a URLHost that the serving certificate cannot name.
func (e Endpoint) Validate() error {
	if net.ParseIP(e.URLHost) != nil {
		return fmt.Errorf("webhook host %s: must be a DNS name (the serving certificate names DNS names only); for this machine use localhost", e.URLHost)
	}
	return nil
}

// DefaultCertificateValidity is how long each serving certificate is valid: one year, as
// cert-controller's default. The CA that signs them lives ten years.
const DefaultCertificateValidity = 365 * 24 * time.Hour

// Certificates rotates the webhook's serving certificate with OPA's cert-controller: the
// leader renews it in Secret SecretName a quarter of its validity before it expires and
// keeps the CA bundle of both webhook configurations current; every replica serves what
// the Secret holds (Rotate). Server certificates are renewed under the same CA,
// so such a renewal leaves the bundle as it is and the API server trusts old and new alike
// while the replicas reload. (The CA itself is renewed a quarter of the certificate's
// validity before its ten years end; cert-controller then replaces the bundle at once, and
// a replica still serving the old certificate is refused until it reloads, seconds later.)
func Certificates(e Endpoint, dir string, validity time.Duration) *rotator.CertRotator {
	host, extra := e.dnsNames()
	return &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: e.Namespace, Name: SecretName},
		CertDir:        dir,
		CAName:         "muster-hub-webhook-ca",
		CAOrganization: "muster",
		DNSName:        host,
		ExtraDNSNames:  extra,
		IsReady:        make(chan struct{}),
		Webhooks: []rotator.WebhookInfo{
			{Name: ConfigurationName, Type: rotator.Validating},
			{Name: ConfigurationName, Type: rotator.Mutating},
		},
		FieldOwner:            "muster-hub",
		RequireLeaderElection: true,
		ServerCertDuration:    validity,
		LookaheadInterval:     validity / 4,
		// Checked often enough that a renewal due in the lookahead is never missed, and
		// no more often than cert-controller's own default for long validities.
		RotationCheckFrequency: min(validity/20, 12*time.Hour),
	}
}

// PrepareCertificate makes sure the Secret holds a serving certificate valid now for r's
// names, making a CA and certificate with r when it does not (a first install, an expired
// certificate, a changed host, or a Secret from a hub before rotation, whose CA key was
// not kept), and writes it into r.CertDir for the webhook server, which must have it
// before it starts. It returns the CA bundle for the webhook configurations. Renewal is
// the rotator's once the manager runs.
func PrepareCertificate(ctx context.Context, c client.Client, r *rotator.CertRotator) ([]byte, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, r.SecretKey, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the webhook's serving certificate: %w", err)
	}
	if err == nil && servable(r, secret.Data, time.Now()) {
		return secret.Data[caCertKey], writeServingFile(r.CertDir, secret.Data)
	}
	data, genErr := newCertificate(r, time.Now())
	if genErr != nil {
		return nil, fmt.Errorf("making the webhook's serving certificate: %w", genErr)
	}
	if err == nil {
		// Replicas started before this one serve the certificate being replaced until they
		// stop or reload (a rollout from a hub without rotation: they never reload). The
		// bundle keeps trusting it while it is valid: cert-controller signs with the first
		// certificate of ca.crt and writes the whole of it into the bundle.
		data[caCertKey] = append(data[caCertKey], stillServedCAs(secret.Data, time.Now())...)
	}
	if apierrors.IsNotFound(err) {
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.SecretKey.Namespace, Name: r.SecretKey.Name},
			Type:       corev1.SecretTypeTLS,
			Data:       data,
		}
		err = c.Create(ctx, secret)
	} else {
		secret.Data = data
		err = c.Update(ctx, secret)
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		// Another replica got there first: use its certificate.
		return PrepareCertificate(ctx, c, r)
	}
	if err != nil {
		return nil, fmt.Errorf("storing the webhook's serving certificate: %w", err)
	}
	return data[caCertKey], writeServingFile(r.CertDir, data)
}

// stillServedCAs are, as PEM, the CAs of the serving certificate in data while it is valid
// at now: those of ca.crt, and the CA certificates a self-signed chain in tls.crt carries
// (what a hub before rotation stored).
func stillServedCAs(data map[string][]byte, now time.Time) []byte {
	served, err := certutil.ParseCertsPEM(data[corev1.TLSCertKey])
	if err != nil || len(served) == 0 || now.After(served[0].NotAfter) {
		return nil
	}
	var out []byte
	for _, crt := range served[1:] {
		if crt.IsCA {
			out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: crt.Raw})...)
		}
	}
	return append(out, data[caCertKey]...)
}

// The Secret's keys, as cert-controller writes them.
const (
	caCertKey = "ca.crt"
	caKeyKey  = "ca.key"
)

// servable reports whether data holds a CA and a serving certificate signed by it, both
// valid at now for r's names.
func servable(r *rotator.CertRotator, data map[string][]byte, now time.Time) bool {
	if ok, _ := rotator.ValidCert(data[caCertKey], data[caCertKey], data[caKeyKey], r.CAName, nil, now); !ok {
		return false
	}
	ok, _ := rotator.ValidCert(data[caCertKey], data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey], r.DNSName,
		&[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, now)
	return ok
}

// newCertificate makes a CA and a serving certificate with r's lifetimes, backdated an
// hour as cert-controller does, against clock skew between the hub and its API server.
func newCertificate(r *rotator.CertRotator, now time.Time) (map[string][]byte, error) {
	begin := now.Add(-time.Hour)
	caLifetime := r.CaCertDuration
	if caLifetime == 0 {
		caLifetime = 10 * 365 * 24 * time.Hour
	}
	ca, err := r.CreateCACert(begin, now.Add(caLifetime))
	if err != nil {
		return nil, err
	}
	if r.ExtKeyUsages == nil {
		// CreateCertPEM reads it; AddRotator sets the same default later.
		r.ExtKeyUsages = &[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	crt, key, err := r.CreateCertPEM(ca, begin, now.Add(r.ServerCertDuration))
	if err != nil {
		return nil, err
	}
	return map[string][]byte{caCertKey: ca.CertPEM, caKeyKey: ca.KeyPEM, corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}, nil
}

// ServingFile is the file in the certificate directory that holds the serving
// certificate followed by its key; the webhook server reads both from it (Go's TLS reads
// each kind of PEM block and skips the other). One file, replaced at once, is never read
// as a new certificate with an old key. It has cert-controller's name for the certificate,
// whose readiness check looks for that file.
const ServingFile = corev1.TLSCertKey

// writeServingFile writes the certificate and key of data into dir's ServingFile,
// replacing the old one at once.
func writeServingFile(dir string, data map[string][]byte) error {
	tmp, err := os.CreateTemp(dir, "."+ServingFile)
	if err != nil {
		return fmt.Errorf("writing the webhook's serving certificate: %w", err)
	}
	_, err = tmp.Write(slices.Concat(data[corev1.TLSCertKey], data[corev1.TLSPrivateKeyKey]))
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, ServingFile))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing the webhook's serving certificate: %w", err)
	}
	return nil
}
