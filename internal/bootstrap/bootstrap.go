// Package bootstrap implements the trust handshake between a joining cluster and the hub,
// in the scheme kubeadm made familiar: the hub publishes its address and CA in
// kube-public/cluster-info, its control plane signs that ConfigMap with every bootstrap
// token, and the joining side accepts the CA only if its public key hash matches the one
// the administrator pasted and the signature matches the token.
package bootstrap

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
)

// Group is the extra group of Muster's bootstrap tokens; RBAC and the admission policy
// installed by `musterctl init` grant it registration only.
const Group = "system:bootstrappers:muster"

// DefaultTokenTTL is how long a new token is valid.
const DefaultTokenTTL = time.Hour

// Token is a bootstrap token, "<id>.<secret>".
type Token struct{ ID, Secret string }

func (t Token) String() string { return bootstraputil.TokenFromIDAndSecret(t.ID, t.Secret) }

// NewToken makes a random token.
func NewToken() (Token, error) {
	s, err := bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return Token{}, err
	}
	return ParseToken(s)
}

// ParseToken checks a token's format.
func ParseToken(s string) (Token, error) {
	if !bootstraputil.IsValidBootstrapToken(s) {
		return Token{}, errors.New("the token is malformed: want <6 lowercase letters or digits>.<16 lowercase letters or digits>")
	}
	id, secret, _ := strings.Cut(s, ".")
	return Token{ID: id, Secret: secret}, nil
}

// ClusterGroup is the extra group of a token that may join only cluster: the hub's approver
// denies its requests for any other identity and the bootstrap policy its MemberClusters
// of any other name.
func ClusterGroup(cluster string) string { return Group + ":cluster:" + cluster }

// TokenSecret is the kube-system Secret that makes the API server accept t until now+ttl,
// authenticating it as system:bootstrap:<id> in Group and, when cluster is set, in
// ClusterGroup(cluster).
func TokenSecret(t Token, ttl time.Duration, now time.Time, cluster string) *corev1.Secret {
	groups := Group
	if cluster != "" {
		groups += "," + ClusterGroup(cluster)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: bootstraputil.BootstrapTokenSecretName(t.ID)},
		Type:       bootstrapapi.SecretTypeBootstrapToken,
		StringData: map[string]string{
			bootstrapapi.BootstrapTokenIDKey:               t.ID,
			bootstrapapi.BootstrapTokenSecretKey:           t.Secret,
			bootstrapapi.BootstrapTokenExpirationKey:       now.Add(ttl).UTC().Format(time.RFC3339),
			bootstrapapi.BootstrapTokenDescriptionKey:      "muster join token",
			bootstrapapi.BootstrapTokenUsageAuthentication: "true",
			bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
			bootstrapapi.BootstrapTokenExtraGroupsKey:      groups,
		},
	}
}

// CAHash is the pin of a CA certificate: the SHA-256 of its public key, as kubeadm writes it.
func CAHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ParseCA returns the certificates of a PEM bundle.
func ParseCA(caPEM []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := caPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate in the CA bundle")
	}
	return certs, nil
}

// ClusterInfo is the kube-public/cluster-info ConfigMap for a hub at server with CA caPEM.
func ClusterInfo(server string, caPEM []byte) (*corev1.ConfigMap, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: bootstrapapi.ConfigMapClusterInfo},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: string(raw)},
	}, nil
}

// JoinCommand is the line `musterctl init` and `musterctl token create` print.
// cluster is the name the token is bound to, if any.
func JoinCommand(server string, t Token, caHash, cluster string) string {
	if cluster == "" {
		cluster = "<name>"
	}
	return fmt.Sprintf("musterctl join --hub-apiserver %s --hub-token %s --hub-ca-hash %s --cluster-name %s", server, t, caHash, cluster)
}

// JoinFlag is flag's value in the arguments of a join command (JoinCommand's, split on
// spaces), given as "--flag value" or "--flag=value"; empty when absent.
func JoinFlag(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}
