package webhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func (e Endpoint) hosts() (string, []net.IP, []string) {
	if e.URLHost != "" {
		if ip := net.ParseIP(e.URLHost); ip != nil {
			return e.URLHost, []net.IP{ip}, nil
		}
		return e.URLHost, nil, nil
	}
	svc := fmt.Sprintf("%s.%s.svc", ServiceName, e.Namespace)
	return svc, nil, []string{ServiceName, fmt.Sprintf("%s.%s", ServiceName, e.Namespace)}
}

// PrepareCertificate gets the shared serving certificate from its Secret, or makes it,
// and writes it as tls.crt and tls.key into dir for the webhook server. It returns the
// certificate's PEM, the CA bundle for the registration.
func PrepareCertificate(ctx context.Context, c client.Client, e Endpoint, dir string) ([]byte, error) {
	host, ips, dns := e.hosts()
	secret := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: e.Namespace, Name: SecretName}, secret)
	if apierrors.IsNotFound(err) || (err == nil && !covers(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey], host)) {
		crt, key, genErr := certutil.GenerateSelfSignedCertKey(host, ips, dns)
		if genErr != nil {
			return nil, fmt.Errorf("making the webhook's serving certificate: %w", genErr)
		}
		fresh := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.Namespace, Name: SecretName},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key},
		}
		if apierrors.IsNotFound(err) {
			err = c.Create(ctx, fresh)
		} else {
			secret.Data = fresh.Data
			err = c.Update(ctx, secret)
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			// Another replica got there first: use its certificate.
			return PrepareCertificate(ctx, c, e, dir)
		}
		if err != nil {
			return nil, fmt.Errorf("storing the webhook's serving certificate: %w", err)
		}
		secret = fresh
	} else if err != nil {
		return nil, fmt.Errorf("reading the webhook's serving certificate: %w", err)
	}
	for name, data := range map[string][]byte{corev1.TLSCertKey: secret.Data[corev1.TLSCertKey], corev1.TLSPrivateKeyKey: secret.Data[corev1.TLSPrivateKeyKey]} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return secret.Data[corev1.TLSCertKey], nil
}

// covers reports whether the stored certificate and key form a pair valid for host.
func covers(crt, key []byte, host string) bool {
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil || len(pair.Certificate) == 0 {
		return false
	}
	certs, err := certutil.ParseCertsPEM(crt)
	if err != nil || len(certs) == 0 {
		return false
	}
	return certs[0].VerifyHostname(host) == nil
}
