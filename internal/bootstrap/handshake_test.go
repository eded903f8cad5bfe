package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
)

// selfSignedPEM is a fresh self-signed CA certificate in PEM.
func selfSignedPEM(t *testing.T, cn string) ([]byte, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert
}

func TestNewTokenIsValidAndRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseToken(tok.String()); err != nil {
			t.Fatalf("NewToken made %q, which ParseToken refuses: %v", tok, err)
		}
		if len(tok.ID) != 6 || len(tok.Secret) != 16 {
			t.Errorf("token %q: id %d and secret %d characters, want 6 and 16", tok, len(tok.ID), len(tok.Secret))
		}
		if seen[tok.ID] {
			t.Errorf("NewToken repeated id %s", tok.ID)
		}
		seen[tok.ID] = true
	}
}

func TestParseTokenSplitsIDAndSecret(t *testing.T) {
	tok, err := ParseToken("abcdef.0123456789abcdef")
	if err != nil || tok.ID != "abcdef" || tok.Secret != "0123456789abcdef" || tok.String() != "abcdef.0123456789abcdef" {
		t.Errorf("ParseToken = %+v, %v", tok, err)
	}
	for _, bad := range []string{"abcdef.0123456789abcde", "abcdef.0123456789abcdefg", "abc def.0123456789abcdef", "abcdef:0123456789abcdef", "abcdef.0123456789ABCDEF"} {
		if _, err := ParseToken(bad); err == nil || !strings.Contains(err.Error(), "the token is malformed") {
			t.Errorf("ParseToken(%q) error = %v, want the malformed-token message", bad, err)
		}
	}
}

// The Secret is what the API server's bootstrap authenticator and signer read: every
// key the join needs, with the description token list shows.
func TestTokenSecretCarriesEverythingTheAPIServerReads(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	s := TokenSecret(Token{ID: "abcdef", Secret: "0123456789abcdef"}, 90*time.Minute, now, "")
	want := map[string]string{
		bootstrapapi.BootstrapTokenIDKey:               "abcdef",
		bootstrapapi.BootstrapTokenSecretKey:           "0123456789abcdef",
		bootstrapapi.BootstrapTokenExpirationKey:       "2026-01-02T03:34:05Z", // in UTC whatever now's zone
		bootstrapapi.BootstrapTokenDescriptionKey:      "muster join token",
		bootstrapapi.BootstrapTokenUsageAuthentication: "true",
		bootstrapapi.BootstrapTokenUsageSigningKey:     "true",
		bootstrapapi.BootstrapTokenExtraGroupsKey:      "system:bootstrappers:muster",
	}
	if len(s.StringData) != len(want) {
		t.Errorf("secret has keys %v, want exactly %v", s.StringData, want)
	}
	for k, v := range want {
		if s.StringData[k] != v {
			t.Errorf("%s = %q, want %q", k, s.StringData[k], v)
		}
	}
}

func TestClusterGroup(t *testing.T) {
	if got := ClusterGroup("eu-1"); got != "system:bootstrappers:muster:cluster:eu-1" {
		t.Errorf("ClusterGroup(eu-1) = %q", got)
	}
	// token list finds a bound token's cluster by this prefix.
	if got := ClusterGroup(""); !strings.HasPrefix(ClusterGroup("x"), got) || got != Group+":cluster:" {
		t.Errorf("ClusterGroup(\"\") = %q, want the prefix of every bound group", got)
	}
}

// The pin is kubeadm's: sha256 over the certificate's SubjectPublicKeyInfo, not over the
// whole certificate, so a CA re-issued with the same key keeps its pin.
func TestCAHashPinsThePublicKey(t *testing.T) {
	_, cert := selfSignedPEM(t, "hub-ca")
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	if got, want := CAHash(cert), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("CAHash = %s, want %s", got, want)
	}
	whole := sha256.Sum256(cert.Raw)
	if CAHash(cert) == "sha256:"+hex.EncodeToString(whole[:]) {
		t.Error("CAHash hashes the whole certificate")
	}
	_, other := selfSignedPEM(t, "hub-ca")
	if CAHash(cert) == CAHash(other) {
		t.Error("two keys have the same pin")
	}
}

func TestParseCA(t *testing.T) {
	first, c1 := selfSignedPEM(t, "one")
	second, c2 := selfSignedPEM(t, "two")
	key := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte("not read")})
	garbage := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
	cases := []struct {
		name    string
		in      []byte
		want    []*x509.Certificate
		wantErr string
	}{
		{"one", first, []*x509.Certificate{c1}, ""},
		{"a bundle, in order", append(append([]byte{}, first...), second...), []*x509.Certificate{c1, c2}, ""},
		{"other blocks skipped", append(append([]byte{}, key...), second...), []*x509.Certificate{c2}, ""},
		{"text around the blocks", append([]byte("# hub CA\n"), first...), []*x509.Certificate{c1}, ""},
		{"empty", nil, nil, "no certificate in the CA bundle"},
		{"only a key", key, nil, "no certificate in the CA bundle"},
		{"not PEM", []byte("-----BEGIN nonsense"), nil, "no certificate in the CA bundle"},
		{"a broken certificate", append(append([]byte{}, first...), garbage...), nil, "x509"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCA(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseCA error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("ParseCA = %d certificates, %v; want %d", len(got), err, len(tc.want))
			}
			for i := range got {
				if !got[i].Equal(tc.want[i]) {
					t.Errorf("certificate %d is %s, want %s", i, got[i].Subject, tc.want[i].Subject)
				}
			}
		})
	}
}

// cluster-info is a kubeconfig naming the hub and its CA, which Discover reads back.
func TestClusterInfoRoundTrips(t *testing.T) {
	caPEM, _ := selfSignedPEM(t, "hub-ca")
	cm, err := ClusterInfo("https://hub.example:6443", caPEM)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Namespace != "kube-public" || cm.Name != "cluster-info" {
		t.Errorf("ConfigMap %s/%s, want kube-public/cluster-info", cm.Namespace, cm.Name)
	}
	cfg, err := clientcmd.Load([]byte(cm.Data[bootstrapapi.KubeConfigKey]))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Clusters) != 1 {
		t.Fatalf("cluster-info names %d clusters, want 1", len(cfg.Clusters))
	}
	for _, c := range cfg.Clusters {
		if c.Server != "https://hub.example:6443" || string(c.CertificateAuthorityData) != string(caPEM) {
			t.Errorf("cluster-info cluster = %s with CA %q", c.Server, c.CertificateAuthorityData)
		}
	}
	if len(cfg.AuthInfos) != 0 {
		t.Errorf("cluster-info, which anyone can read, carries credentials: %v", cfg.AuthInfos)
	}
}

func TestJoinCommand(t *testing.T) {
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	hash := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct{ cluster, want string }{
		{"", "musterctl join --hub-apiserver https://hub:6443 --hub-token abcdef.0123456789abcdef --hub-ca-hash " + hash + " --cluster-name <name>"},
		{"eu-1", "musterctl join --hub-apiserver https://hub:6443 --hub-token abcdef.0123456789abcdef --hub-ca-hash " + hash + " --cluster-name eu-1"},
	} {
		if got := JoinCommand("https://hub:6443", tok, hash, tc.cluster); got != tc.want {
			t.Errorf("JoinCommand(cluster %q) =\n%s\nwant\n%s", tc.cluster, got, tc.want)
		}
	}
}

// fakeHub serves whatever answer says for cluster-info, over TLS.
func fakeHub(t *testing.T, answer func(w http.ResponseWriter)) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { answer(w) }))
	t.Cleanup(srv.Close)
	return srv
}

// signedClusterInfo is a cluster-info whose kubeconfig is raw, signed with tok.
func signedClusterInfo(t *testing.T, raw string, tok Token) *corev1.ConfigMap {
	t.Helper()
	sig, err := jws.ComputeDetachedSignature(raw, tok.ID, tok.Secret)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{Data: map[string]string{bootstrapapi.KubeConfigKey: raw, bootstrapapi.JWSSignatureKeyPrefix + tok.ID: sig}}
}

// Each way a hub's answer can be wrong gets its own message, so the user knows whether
// the URL, the hub's install, the token or the pin is at fault.
func TestDiscoverRefusesBadClusterInfo(t *testing.T) {
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	caPEM, caCert := selfSignedPEM(t, "hub-ca")
	pin := CAHash(caCert)
	good, err := ClusterInfo("https://hub.example", caPEM)
	if err != nil {
		t.Fatal(err)
	}
	noCert, err := ClusterInfo("https://hub.example", []byte("no PEM here"))
	if err != nil {
		t.Fatal(err)
	}
	encode := func(cm *corev1.ConfigMap) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(cm) }
	}
	cases := []struct {
		name    string
		answer  func(w http.ResponseWriter)
		wantErr string
	}{
		{"not installed", func(w http.ResponseWriter) { http.Error(w, "nope", http.StatusNotFound) }, "answered 404 Not Found for kube-public/cluster-info: is Muster installed there"},
		{"anonymous refused", func(w http.ResponseWriter) { http.Error(w, "nope", http.StatusForbidden) }, "answered 403 Forbidden"},
		{"not JSON", func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>")) }, "the hub's cluster-info is not a ConfigMap"},
		{"unsigned", encode(&corev1.ConfigMap{Data: good.Data}), "the hub does not know bootstrap token abcdef"},
		{"signed kubeconfig that is not one", encode(signedClusterInfo(t, "{not yaml", tok)), "the hub's cluster-info holds no valid kubeconfig"},
		{"signed kubeconfig without a cluster", encode(signedClusterInfo(t, "apiVersion: v1\nkind: Config\n", tok)), "the hub's cluster-info names no cluster"},
		{"signed kubeconfig without a CA", encode(signedClusterInfo(t, noCert.Data[bootstrapapi.KubeConfigKey], tok)), "the hub's cluster-info CA: no certificate in the CA bundle"},
		{"signed for another secret", encode(signedClusterInfo(t, good.Data[bootstrapapi.KubeConfigKey], Token{ID: "abcdef", Secret: "ffffffffffffffff"})), "the secret of bootstrap token abcdef is wrong"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeHub(t, tc.answer)
			hub, err := Discover(t.Context(), srv.URL, tok, pin, time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Discover = %+v, %v; want an error containing %q", hub, err, tc.wantErr)
			}
		})
	}
	// The same good answer, correctly signed, is accepted: the cases above fail for
	// their one fault only. The hub URL is the one given, not the one cluster-info names.
	srv := fakeHub(t, encode(signedClusterInfo(t, good.Data[bootstrapapi.KubeConfigKey], tok)))
	hub, err := Discover(t.Context(), srv.URL+"/", tok, pin, 5*time.Second)
	if err != nil || hub.URL != srv.URL+"/" || string(hub.CA) != string(caPEM) {
		t.Errorf("Discover of a good cluster-info = %+v, %v", hub, err)
	}
}

// A hub's CA bundle may hold several certificates (a CA rotation): a pin of any of them
// is accepted, and a wrong pin is told the first one's.
func TestDiscoverAcceptsAPinOfAnyCertificateInTheBundle(t *testing.T) {
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	oldPEM, oldCert := selfSignedPEM(t, "old")
	newPEM, newCert := selfSignedPEM(t, "new")
	cm, err := ClusterInfo("https://hub.example", append(append([]byte{}, oldPEM...), newPEM...))
	if err != nil {
		t.Fatal(err)
	}
	signed := signedClusterInfo(t, cm.Data[bootstrapapi.KubeConfigKey], tok)
	srv := fakeHub(t, func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(signed) })
	for _, pin := range []string{CAHash(oldCert), CAHash(newCert)} {
		if _, err := Discover(t.Context(), srv.URL, tok, pin, 5*time.Second); err != nil {
			t.Errorf("pin %s of a certificate in the bundle: %v", pin, err)
		}
	}
	_, err = Discover(t.Context(), srv.URL, tok, "sha256:"+strings.Repeat("0", 64), 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "the hub presents "+CAHash(oldCert)) {
		t.Errorf("wrong pin: %v, want the message to name the hub's pin", err)
	}
}

func TestDiscoverRefusesBadURLsBeforeDialling(t *testing.T) {
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	pin := "sha256:" + strings.Repeat("0", 64)
	for _, u := range []string{"", "hub.example:6443", "ftp://hub.example", "http://hub.example", "https//hub.example"} {
		_, err := Discover(t.Context(), u, tok, pin, time.Second)
		if err == nil || !strings.Contains(err.Error(), "is not an https URL") {
			t.Errorf("Discover(%q) error = %v, want an https URL to be asked for", u, err)
		}
	}
	for _, h := range []string{"", "SHA256:abc", strings.Repeat("0", 64)} {
		_, err := Discover(t.Context(), "https://127.0.0.1:1", tok, h, time.Second)
		if err == nil || !strings.Contains(err.Error(), "must look like sha256:<hex>") {
			t.Errorf("Discover with hash %q error = %v", h, err)
		}
	}
}

// A join run right after `musterctl token create` may read cluster-info before the hub's
// control plane has signed the new token: discovery waits for the signature, within its
// timeout, rather than calling the token unknown.
func TestDiscoverWaitsForATokenJustCreatedToBeSigned(t *testing.T) {
	tok := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	caPEM, caCert := selfSignedPEM(t, "hub-ca")
	unsigned, err := ClusterInfo("https://hub.example", caPEM)
	if err != nil {
		t.Fatal(err)
	}
	signed := signedClusterInfo(t, unsigned.Data[bootstrapapi.KubeConfigKey], tok)
	var reads atomic.Int32
	srv := fakeHub(t, func(w http.ResponseWriter) {
		answer := unsigned
		if reads.Add(1) > 2 {
			answer = signed
		}
		_ = json.NewEncoder(w).Encode(answer)
	})
	if _, err := Discover(t.Context(), srv.URL, tok, CAHash(caCert), 5*time.Second); err != nil {
		t.Fatalf("Discover of a token signed on the third read: %v", err)
	}
	if n := reads.Load(); n != 3 {
		t.Errorf("cluster-info read %d times, want 3 (twice unsigned, then signed)", n)
	}
}
