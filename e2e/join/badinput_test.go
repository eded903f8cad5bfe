//go:build e2e

package join

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// withArg returns the join arguments with flag's value replaced.
func withArg(args []string, flag, value string) []string {
	out := slices.Clone(args)
	for i := range out {
		if out[i] == flag && i+1 < len(out) {
			out[i+1] = value
		}
	}
	return out
}

func testBadJoinInput(t *testing.T) {
	member := memberNamed("member3")
	goodToken := withArgValue(muster.JoinArgs, "--hub-token")
	id, secret, _ := strings.Cut(goodToken, ".")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "wrong token secret",
			args: withArg(muster.JoinArgs, "--hub-token", id+"."+strings.Repeat("0", len(secret))),
			want: "secret of bootstrap token " + id + " is wrong",
		},
		{
			name: "unknown token",
			args: withArg(muster.JoinArgs, "--hub-token", "zzzzzz."+secret),
			want: "does not know bootstrap token zzzzzz",
		},
		{
			name: "malformed token",
			args: withArg(muster.JoinArgs, "--hub-token", "not-a-token"),
			want: "the token is malformed",
		},
		{
			name: "wrong CA hash",
			args: withArg(muster.JoinArgs, "--hub-ca-hash", "sha256:"+strings.Repeat("ab", 32)),
			want: "the hub's CA does not match --hub-ca-hash",
		},
		{
			name: "unreachable hub",
			args: withArg(muster.JoinArgs, "--hub-apiserver", "https://127.0.0.1:1"),
			want: "cannot reach the hub at https://127.0.0.1:1",
		},
		{
			name: "name of another cluster",
			args: muster.JoinArgs,
			// The join token of musterctl init may not read member1: it cannot tell whose
			// cluster that is, and says how a re-join of member1 would go.
			want: "the hub already has a cluster named member1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			name := "member3"
			if tc.name == "name of another cluster" {
				name = "member1"
			}
			args := append(slices.Clone(tc.args), "--cluster-name", name, "--no-deploy", "--timeout", "3s")
			out, err := muster.Musterctl(ctx, member, args...)
			if err == nil {
				t.Fatalf("join succeeded, want it to fail with %q:\n%s", tc.want, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("join failed with\n%s\nwant a message containing %q", out, tc.want)
			}
			err = member.Client.Get(ctx, types.NamespacedName{Name: musterv1.AgentNamespace}, &corev1.Namespace{})
			if !apierrors.IsNotFound(err) {
				t.Errorf("after a failed join the member has namespace %s (err %v): the join left something installed", musterv1.AgentNamespace, err)
			}
		})
	}
}

func withArgValue(args []string, flag string) string {
	for i := range args {
		if args[i] == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
