package bootstrap

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
)

// Hub is what discovery learns and verifies about a hub.
type Hub struct {
	URL string
	CA  []byte
}

// Discover fetches the hub's cluster-info without trusting anything yet, then accepts it
// only if its CA's public key hash equals caHash and it carries a signature made with
// token. Every failure says which of the three inputs is wrong.
func Discover(ctx context.Context, hubURL string, token Token, caHash string, timeout time.Duration) (*Hub, error) {
	if _, err := url.ParseRequestURI(hubURL); err != nil || !strings.HasPrefix(hubURL, "https://") {
		return nil, fmt.Errorf("--hub-apiserver %q is not an https URL", hubURL)
	}
	if !strings.HasPrefix(caHash, "sha256:") {
		return nil, fmt.Errorf("--hub-ca-hash %q must look like sha256:<hex>", caHash)
	}
	cm, sig, err := clusterInfoSignedFor(ctx, hubURL, token.ID, timeout)
	if err != nil {
		return nil, err
	}
	kubeconfig := cm.Data[bootstrapapi.KubeConfigKey]
	if !jws.DetachedTokenIsValid(sig, kubeconfig, token.ID, token.Secret) {
		return nil, fmt.Errorf("the secret of bootstrap token %s is wrong: the hub's signature does not match it", token.ID)
	}
	cfg, err := clientcmd.Load([]byte(kubeconfig))
	if err != nil {
		return nil, fmt.Errorf("the hub's cluster-info holds no valid kubeconfig: %w", err)
	}
	for _, c := range cfg.Clusters {
		certs, err := ParseCA(c.CertificateAuthorityData)
		if err != nil {
			return nil, fmt.Errorf("the hub's cluster-info CA: %w", err)
		}
		for _, cert := range certs {
			if CAHash(cert) == caHash {
				return &Hub{URL: hubURL, CA: c.CertificateAuthorityData}, nil
			}
		}
		return nil, fmt.Errorf("the hub's CA does not match --hub-ca-hash: the hub presents %s", CAHash(certs[0]))
	}
	return nil, errors.New("the hub's cluster-info names no cluster")
}

// clusterInfoSignedFor reads cluster-info until it carries the signature made with token
// tokenID. The hub's control plane signs a new token asynchronously (kube-controller-manager's
// bootstrapsigner), so a join run right after `musterctl token create` may read
// cluster-info before the signature is there: only a token still unsigned after timeout is
// unknown. Any other failure ends the wait at once.
func clusterInfoSignedFor(ctx context.Context, hubURL, tokenID string, timeout time.Duration) (*corev1.ConfigMap, string, error) {
	deadline := time.Now().Add(timeout)
	for {
		cm, err := fetchClusterInfo(ctx, hubURL, timeout)
		if err != nil {
			return nil, "", err
		}
		if sig, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+tokenID]; ok {
			return cm, sig, nil
		}
		if time.Now().After(deadline) {
			return nil, "", fmt.Errorf("the hub does not know bootstrap token %s: it is wrong or expired (create a new one with `musterctl token create`)", tokenID)
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(signaturePoll):
		}
	}
}

// signaturePoll is how often discovery looks again for a token's signature.
const signaturePoll = 500 * time.Millisecond

// fetchClusterInfo reads kube-public/cluster-info anonymously. TLS is not verified here
// because the CA is not known yet; the content is verified by the caller instead.
func fetchClusterInfo(ctx context.Context, hubURL string, timeout time.Duration) (*corev1.ConfigMap, error) {
	client := &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // verified by CA hash and token signature
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(hubURL, "/")+"/api/v1/namespaces/kube-public/configmaps/cluster-info", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the hub at %s: %w", hubURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the hub's cluster-info: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the hub at %s answered %s for kube-public/cluster-info: is Muster installed there (`musterctl init`)?", hubURL, resp.Status)
	}
	var cm corev1.ConfigMap
	if err := json.Unmarshal(body, &cm); err != nil {
		return nil, fmt.Errorf("the hub's cluster-info is not a ConfigMap: %w", err)
	}
	return &cm, nil
}
