package bootstrap

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
)

func TestParseToken(t *testing.T) {
	for _, tc := range []struct {
		in    string
		valid bool
	}{
		{"abcdef.0123456789abcdef", true},
		{"ABCDEF.0123456789abcdef", false},
		{"abcdef0123456789abcdef", false},
		{"abcde.0123456789abcdef", false},
		{"", false},
	} {
		_, err := ParseToken(tc.in)
		if (err == nil) != tc.valid {
			t.Errorf("ParseToken(%q) error = %v, want valid %v", tc.in, err, tc.valid)
		}
	}
}

func TestTokenSecret(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := TokenSecret(Token{ID: "abcdef", Secret: "0123456789abcdef"}, time.Hour, now, "")
	if s.Namespace != "kube-system" || s.Name != "bootstrap-token-abcdef" || s.Type != bootstrapapi.SecretTypeBootstrapToken {
		t.Errorf("secret %s/%s of type %s", s.Namespace, s.Name, s.Type)
	}
	want := map[string]string{
		bootstrapapi.BootstrapTokenExpirationKey:       "2026-11-22T13:00:00Z",
		bootstrapapi.BootstrapTokenExtraGroupsKey:      Group,
		bootstrapapi.BootstrapTokenUsageAuthentication: "true",
	}
	for k, v := range want {
		if s.StringData[k] != v {
			t.Errorf("%s = %q, want %q", k, s.StringData[k], v)
		}
	}
}

// hubServer serves a signed cluster-info the way a hub's control plane does.
func hubServer(t *testing.T, token Token) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewTLSServer(nil)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cm, err := ClusterInfo(srv.URL, caPEM)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := jws.ComputeDetachedSignature(cm.Data[bootstrapapi.KubeConfigKey], token.ID, token.Secret)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[bootstrapapi.JWSSignatureKeyPrefix+token.ID] = sig
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/kube-public/configmaps/cluster-info" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(cm)
	})
	t.Cleanup(srv.Close)
	return srv, CAHash(srv.Certificate())
}

func TestDiscover(t *testing.T) {
	token := Token{ID: "abcdef", Secret: "0123456789abcdef"}
	srv, hash := hubServer(t, token)
	cases := []struct {
		name    string
		url     string
		token   Token
		hash    string
		wantErr string
	}{
		{name: "everything right", url: srv.URL, token: token, hash: hash},
		{name: "wrong secret", url: srv.URL, token: Token{ID: "abcdef", Secret: "ffffffffffffffff"}, hash: hash, wantErr: "secret of bootstrap token abcdef is wrong"},
		{name: "unknown token", url: srv.URL, token: Token{ID: "zzzzzz", Secret: token.Secret}, hash: hash, wantErr: "does not know bootstrap token zzzzzz"},
		{name: "wrong CA hash", url: srv.URL, token: token, hash: "sha256:" + strings.Repeat("0", 64), wantErr: "does not match --hub-ca-hash"},
		{name: "malformed hash", url: srv.URL, token: token, hash: "md5:x", wantErr: "must look like sha256:"},
		{name: "plain http URL", url: "http://127.0.0.1:1", token: token, hash: hash, wantErr: "is not an https URL"},
		{name: "unreachable", url: "https://127.0.0.1:1", token: token, hash: hash, wantErr: "cannot reach the hub"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub, err := Discover(t.Context(), tc.url, tc.token, tc.hash, 2*time.Second)
			if tc.wantErr == "" {
				if err != nil || hub.URL != srv.URL || len(hub.CA) == 0 {
					t.Fatalf("Discover() = %+v, %v", hub, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Discover() error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestTokenSecretBoundToACluster(t *testing.T) {
	s := TokenSecret(Token{ID: "abcdef", Secret: "0123456789abcdef"}, time.Hour, time.Now(), "eu-1")
	if got, want := s.StringData[bootstrapapi.BootstrapTokenExtraGroupsKey], Group+","+Group+":cluster:eu-1"; got != want {
		t.Errorf("extra groups = %q, want %q", got, want)
	}
}

// A join command's flags are read back in either form; an absent one, or one without a
// value, is empty.
func TestJoinFlag(t *testing.T) {
	args := strings.Fields(JoinCommand("https://hub:6443", Token{ID: "abcdef", Secret: "0123456789abcdef"}, "sha256:00", ""))
	args = append(args, "--image=muster-agent:v1", "--timeout")
	for flag, want := range map[string]string{
		"--hub-apiserver": "https://hub:6443", "--hub-token": "abcdef.0123456789abcdef", "--hub-ca-hash": "sha256:00",
		"--image": "muster-agent:v1", "--timeout": "", "--no-deploy": "",
	} {
		if got := JoinFlag(args, flag); got != want {
			t.Errorf("JoinFlag(%s) = %q, want %q", flag, got, want)
		}
	}
}
