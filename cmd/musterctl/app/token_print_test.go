package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var tokenNow = time.Date(2026, 11, 23, 20, 15, 0, 0, time.UTC)

func TestExpiry(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "never"},
		{"2026-11-23T21:00:00Z", "2026-11-23T21:00:00Z (in 45m)"},
		{"2026-11-25T20:15:00Z", "2026-11-25T20:15:00Z (in 2d)"},
		{"2026-11-23T20:15:00Z", "2026-11-23T20:15:00Z (expired)"}, // expiring now is expired
		{"2026-11-23T19:00:00Z", "2026-11-23T19:00:00Z (expired)"},
		{"tomorrow", "tomorrow (unreadable)"},
	} {
		if got := expiry(tc.in, tokenNow); got != tc.want {
			t.Errorf("expiry(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTokenCluster(t *testing.T) {
	for _, tc := range []struct{ groups, want string }{
		{"", "<any>"},
		{"system:bootstrappers:muster", "<any>"},
		{"system:bootstrappers:muster,system:bootstrappers:muster:cluster:eu-1", "eu-1"},
		{"system:bootstrappers:muster:cluster:edge-7,system:bootstrappers:muster", "edge-7"},
		{"system:bootstrappers:kubeadm:default-node-token", "<any>"},
	} {
		if got := tokenCluster(tc.groups); got != tc.want {
			t.Errorf("tokenCluster(%q) = %q, want %q", tc.groups, got, tc.want)
		}
	}
}

func TestTokenUsages(t *testing.T) {
	secret := func(kv ...string) *corev1.Secret {
		s := &corev1.Secret{Data: map[string][]byte{}}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	for _, tc := range []struct {
		name string
		s    *corev1.Secret
		want string
	}{
		{"none", secret(), "-"},
		{"authentication", secret("usage-bootstrap-authentication", "true"), "authentication"},
		{"both, in kubeadm's order", secret("usage-bootstrap-signing", "true", "usage-bootstrap-authentication", "true"), "signing,authentication"},
		{"false is not a usage", secret("usage-bootstrap-signing", "false", "usage-bootstrap-authentication", "yes"), "-"},
	} {
		if got := tokenUsages(tc.s); got != tc.want {
			t.Errorf("%s: tokenUsages = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTokenIDAcceptsAnIDOrAWholeToken(t *testing.T) {
	for in, want := range map[string]string{
		"abcdef":                  "abcdef",
		"abcdef.0123456789abcdef": "abcdef",
		"":                        "",
		"a.b.c":                   "a",
	} {
		if got := tokenID(in); got != want {
			t.Errorf("tokenID(%q) = %q, want %q", in, got, want)
		}
	}
	for id, ok := range map[string]bool{"abcdef": true, "a1b2c3": true, "ABCDEF": false, "abcde": false, "abcdefg": false, "abc-ef": false} {
		if tokenIDPattern.MatchString(id) != ok {
			t.Errorf("token id pattern matches %q: %t, want %t", id, !ok, ok)
		}
	}
}

func tokenSecret(id, expires, groups, description string) corev1.Secret {
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
		Data: map[string][]byte{
			"token-id": []byte(id), "expiration": []byte(expires), "auth-extra-groups": []byte(groups),
			"description": []byte(description), "usage-bootstrap-authentication": []byte("true"),
		},
	}
}

// token list shows each token's id, when it expires, the cluster it is bound to, its
// usages and description, soonest to expire first, and never its secret.
func TestPrintTokens(t *testing.T) {
	secrets := []corev1.Secret{
		tokenSecret("late00", "2026-11-24T20:15:00Z", "system:bootstrappers:muster", "muster join token"),
		tokenSecret("bound0", "2026-11-23T21:15:00Z", "system:bootstrappers:muster,system:bootstrappers:muster:cluster:eu-1", "muster join token"),
		tokenSecret("gone00", "2026-11-23T19:15:00Z", "", ""),
	}
	secrets[0].Data["token-secret"] = []byte("0123456789abcdef")
	var out bytes.Buffer
	if err := printTokens(&out, secrets, tokenNow); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ID EXPIRES CLUSTER USAGES DESCRIPTION",
		"gone00 2026-11-23T19:15:00Z (expired) <any> authentication -",
		"bound0 2026-11-23T21:15:00Z (in 60m) eu-1 authentication muster join token",
		"late00 2026-11-24T20:15:00Z (in 24h) <any> authentication muster join token",
	}
	got := squash(out.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("token list:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(out.String(), "0123456789abcdef") {
		t.Errorf("token list shows a secret:\n%s", out.String())
	}
}

func TestPrintTokensWithNone(t *testing.T) {
	var out bytes.Buffer
	if err := printTokens(&out, nil, tokenNow); err != nil || out.String() != "No bootstrap tokens.\n" {
		t.Errorf("printTokens(none) = %q, %v", out.String(), err)
	}
}

// squash is out's lines with their cells separated by one space.
func squash(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

// A cluster name is checked as the MemberCluster CRD and its hub namespace
// (muster-member-<name>) will check it, before anything is created for it.
func TestCheckClusterName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"eu-1", true},
		{"a", true},
		{"0", true},
		{"edge-7-gpu", true},
		{strings.Repeat("a", 49), true},
		{strings.Repeat("a", 50), false},
		{"", false},
		{"Edge", false},
		{"-edge", false},
		{"edge-", false},
		{"edge.eu", false},
		{"edge_eu", false},
		{"edge eu", false},
		{"édge", false},
	} {
		err := checkClusterName("--cluster-name", tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("checkClusterName(%q) = %v, want ok %t", tc.name, err, tc.ok)
		}
		if err != nil && err.Error() != `--cluster-name "`+tc.name+`" must be a DNS label of at most 49 characters` {
			t.Errorf("checkClusterName(%q) says %q", tc.name, err)
		}
	}
}
