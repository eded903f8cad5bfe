package app_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/musterhq/muster/internal/bootstrap"
)

func TestTokenListAndDelete(t *testing.T) {
	cm, err := bootstrap.ClusterInfo(env.Config.Host, env.Config.CAData)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	idOf := regexp.MustCompile(`--hub-token ([a-z0-9]{6})\.`)
	var ids []string
	for _, args := range [][]string{{"token", "create"}, {"token", "create", "--cluster", "bound-one", "--ttl", "2h"}} {
		r := musterctl(args...)
		m := idOf.FindStringSubmatch(r.out)
		if r.code != 0 || m == nil {
			t.Fatalf("%v:\n%s", args, r)
		}
		ids = append(ids, m[1])
	}

	r := musterctl("token", "list")
	if r.code != 0 || !hasLine(r.out, "ID EXPIRES CLUSTER USAGES DESCRIPTION") {
		t.Fatalf("token list:\n%s", r)
	}
	unbound, bound := ids[0], ids[1]
	if !regexp.MustCompile(`(?m)^` + unbound + ` \S+ \(in 59m\) <any> \S*authentication\S* muster join token$`).MatchString(strings.Join(fields(r.out), "\n")) {
		t.Errorf("no row for the unbound token %s:\n%s", unbound, r.out)
	}
	if !hasLine(r.out, bound+" ") || !strings.Contains(r.out, "bound-one") {
		t.Errorf("no row for token %s bound to bound-one:\n%s", bound, r.out)
	}
	if strings.Contains(r.out, ".") && regexp.MustCompile(`[a-z0-9]{6}\.[a-z0-9]{16}`).MatchString(r.out) {
		t.Errorf("token list shows a secret:\n%s", r.out)
	}

	// A whole token is accepted as well as its id.
	if r := musterctl("token", "delete", unbound+".0123456789abcdef"); r.code != 0 || strings.TrimSpace(r.out) != `bootstrap token "`+unbound+`" deleted` {
		t.Errorf("token delete:\n%s", r)
	}
	if r := musterctl("token", "list"); hasLine(r.out, unbound+" ") || !hasLine(r.out, bound+" ") {
		t.Errorf("after deleting %s:\n%s", unbound, r)
	}
	for _, c := range []struct{ arg, stderr string }{
		{unbound, `error: bootstrap token "` + unbound + `" not found`},
		{"NOT-AN-ID", `error: "NOT-AN-ID" is not a bootstrap token id`},
	} {
		if r := musterctl("token", "delete", c.arg); r.code != 1 || !strings.Contains(r.err, c.stderr) {
			t.Errorf("token delete %s: want exit 1 and %q:\n%s", c.arg, c.stderr, r)
		}
	}
}

func TestVersion(t *testing.T) {
	if r := musterctl("version", "--client"); r.code != 0 || strings.TrimSpace(r.out) != "musterctl: devel" {
		t.Errorf("version --client:\n%s", r)
	}
	r := musterctl("version")
	if r.code != 0 || !hasLine(r.out, "hub API server: v1.") || !hasLine(r.out, "hub: no Deployment muster-system/muster-hub") {
		t.Errorf("version:\n%s", r)
	}
	var out, errOut strings.Builder
	if code := runUnreachable(&out, &errOut, "version"); code != 1 || !strings.HasPrefix(out.String(), "musterctl: ") || !strings.Contains(errOut.String(), "reading the hub's version") {
		t.Errorf("version against no hub: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// token create refuses a token that could never join: bound to a name no MemberCluster
// can have (the hub namespace muster-member-<name> must be a DNS label, so at most 49
// characters), or already expired. Nothing is created then.
func TestTokenCreateRefusesATokenThatCannotJoin(t *testing.T) {
	cm, err := bootstrap.ClusterInfo(env.Config.Host, env.Config.CAData)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// tokenIDs lists the ids the hub holds (the first column; the others tick with time).
	tokenIDs := func() []string {
		r := musterctl("token", "list")
		var ids []string
		for _, l := range fields(r.out) {
			ids = append(ids, strings.Split(l, " ")[0])
		}
		return ids
	}
	before := tokenIDs()
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"token", "create", "--cluster", strings.Repeat("a", 50)}, `error: --cluster "` + strings.Repeat("a", 50) + `" must be a DNS label of at most 49 characters`},
		{[]string{"token", "create", "--cluster", "Edge"}, `error: --cluster "Edge" must be a DNS label`},
		{[]string{"token", "create", "--ttl", "0s"}, "error: --ttl 0s: a token must live for some time"},
		{[]string{"token", "create", "--ttl", "-1h"}, "error: --ttl -1h0m0s: a token must live for some time"},
	} {
		if r := musterctl(c.args...); r.code != 1 || !strings.Contains(r.err, c.stderr) || r.out != "" {
			t.Errorf("%v: want exit 1, no output and %q:\n%s", c.args, c.stderr, r)
		}
	}
	if after := tokenIDs(); !slices.Equal(after, before) {
		t.Errorf("refused token creates changed the tokens from %v to %v", before, after)
	}
	// The longest name a cluster can have is accepted.
	r := musterctl("token", "create", "--cluster", strings.Repeat("a", 49), "--ttl", "10m")
	if r.code != 0 || !strings.Contains(r.out, "--cluster-name "+strings.Repeat("a", 49)) {
		t.Errorf("token create for a 49-character name:\n%s", r)
	}
}
