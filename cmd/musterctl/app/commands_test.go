package app_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// publishClusterInfo makes sure kube-public/cluster-info names this API server, as init
// leaves it.
func publishClusterInfo(t *testing.T) {
	t.Helper()
	cm, err := bootstrap.ClusterInfo(env.Config.Host, env.Config.CAData)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), cm); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func tokenSecret(t *testing.T, id string) (*corev1.Secret, error) {
	t.Helper()
	var s corev1.Secret
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + id}, &s)
	return &s, err
}

var joinLineOf = regexp.MustCompile(`^musterctl join --hub-apiserver (\S+) --hub-token ([a-z0-9]{6})\.[a-z0-9]{16} --hub-ca-hash sha256:[0-9a-f]{64} --cluster-name (\S+)\n$`)

// token create prints only the join line, which a script can run as it is; a token bound
// to a cluster names it there and carries its group, so the hub can hold it to that name.
func TestTokenCreatePrintsOneJoinLine(t *testing.T) {
	publishClusterInfo(t)
	for _, tc := range []struct {
		args        []string
		cluster     string
		ttl         time.Duration
		extraGroups string
	}{
		{nil, "<name>", time.Hour, "system:bootstrappers:muster"},
		{[]string{"--cluster", "eu-7", "--ttl", "15m"}, "eu-7", 15 * time.Minute, "system:bootstrappers:muster,system:bootstrappers:muster:cluster:eu-7"},
	} {
		started := time.Now()
		r := musterctl(append([]string{"token", "create"}, tc.args...)...)
		m := joinLineOf.FindStringSubmatch(r.out)
		if r.code != 0 || m == nil || r.err != "" {
			t.Fatalf("token create %v:\n%s", tc.args, r)
		}
		if m[1] != env.Config.Host || m[3] != tc.cluster {
			t.Errorf("join line names hub %s and cluster %s, want %s and %s", m[1], m[3], env.Config.Host, tc.cluster)
		}
		s, err := tokenSecret(t, m[2])
		if err != nil {
			t.Fatalf("the printed token has no Secret: %v", err)
		}
		if got := string(s.Data["auth-extra-groups"]); got != tc.extraGroups {
			t.Errorf("token groups %q, want %q", got, tc.extraGroups)
		}
		expires, err := time.Parse(time.RFC3339, string(s.Data["expiration"]))
		if err != nil || expires.Sub(started) < tc.ttl-time.Minute || expires.Sub(started) > tc.ttl+time.Minute {
			t.Errorf("token expires %s after creation, want about %s (%v)", expires.Sub(started), tc.ttl, err)
		}
	}
}

// token delete deletes each id in turn and stops at the first it cannot delete.
func TestTokenDeleteSeveral(t *testing.T) {
	publishClusterInfo(t)
	var ids []string
	for range 3 {
		m := joinLineOf.FindStringSubmatch(musterctl("token", "create").out)
		if m == nil {
			t.Fatal("token create printed no join line")
		}
		ids = append(ids, m[2])
	}
	r := musterctl("token", "delete", ids[0], ids[1])
	if r.code != 0 || r.out != `bootstrap token "`+ids[0]+`" deleted`+"\n"+`bootstrap token "`+ids[1]+`" deleted`+"\n" {
		t.Errorf("token delete of two:\n%s", r)
	}
	r = musterctl("token", "delete", "bad.id", ids[2])
	if r.code != 1 || r.out != "" || !strings.Contains(r.err, `error: "bad.id" is not a bootstrap token id`) {
		t.Errorf("token delete with a bad id first:\n%s", r)
	}
	for i, id := range ids {
		_, err := tokenSecret(t, id)
		if gone := apierrors.IsNotFound(err); gone != (i < 2) {
			t.Errorf("token %s: deleted %t, want %t (%v)", id, gone, i < 2, err)
		}
	}
}

func TestTokenCommandsRefuseBadUsage(t *testing.T) {
	for _, c := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"token", "delete"}, "requires at least 1 arg(s), only received 0"},
		{[]string{"token", "create", "eu-1"}, `unknown command "eu-1" for "musterctl token create"`},
		{[]string{"token", "list", "all"}, `unknown command "all" for "musterctl token list"`},
		{[]string{"token", "create", "--ttl", "1 hour"}, `invalid argument "1 hour" for "--ttl" flag`},
		{[]string{"token", "create", "--cluster", ""}, ""}, // an empty --cluster is no binding, not an error
	} {
		r := musterctl(c.args...)
		if c.stderr == "" {
			if r.code != 0 || !strings.HasSuffix(r.out, "--cluster-name <name>\n") {
				t.Errorf("%v:\n%s", c.args, r)
			}
			continue
		}
		if r.code != 1 || !strings.Contains(r.err, c.stderr) {
			t.Errorf("%v: want exit 1 and %q:\n%s", c.args, c.stderr, r)
		}
	}
	var out, errOut strings.Builder
	if code := runUnreachable(&out, &errOut, "token", "list"); code != 1 || !strings.Contains(errOut.String(), "error: listing bootstrap tokens:") {
		t.Errorf("token list against no hub: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// init without --no-deploy creates the hub Deployment with the image asked for, and
// version then reports that image as the hub's.
func TestInitDeploysTheHubAndVersionReportsIt(t *testing.T) {
	key := client.ObjectKey{Namespace: musterv1.HubNamespace, Name: "muster-hub"}
	t.Cleanup(func() {
		// Other tests expect the hub to run outside the cluster.
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		// t.Context() has ended by the time cleanups run.
		ctx := context.Background()
		_ = env.Client.Delete(ctx, d)
		envtest.Eventually(t, "the hub Deployment gone", func() (bool, string) {
			err := env.Client.Get(ctx, key, &appsv1.Deployment{})
			return apierrors.IsNotFound(err), "still there"
		})
	})
	r := musterctl("init", "--image", "registry.example/muster-hub:v9.9.9", "--token-ttl", "10m")
	if r.code != 0 || !hasLine(r.out, "✓ hub Deployment muster-system/muster-hub (registry.example/muster-hub:v9.9.9) created") {
		t.Fatalf("init:\n%s", r)
	}
	var d appsv1.Deployment
	if err := env.Client.Get(t.Context(), key, &d); err != nil {
		t.Fatal(err)
	}
	if c := d.Spec.Template.Spec.Containers; len(c) != 1 || c[0].Image != "registry.example/muster-hub:v9.9.9" {
		t.Errorf("hub Deployment containers %+v, want the image asked for", c)
	}
	r = musterctl("version")
	if r.code != 0 || !hasLine(r.out, "hub: registry.example/muster-hub:v9.9.9") {
		t.Errorf("version with the hub deployed:\n%s", r)
	}
}

// init refuses a token lifetime that would print a join command that can only fail, and
// says so before installing anything.
func TestInitRefusesATokenThatCannotJoin(t *testing.T) {
	for _, ttl := range []string{"0s", "-5m"} {
		r := musterctl("init", "--no-deploy", "--token-ttl", ttl)
		if r.code != 1 || r.out != "" || !strings.Contains(r.err, "error: --token-ttl "+ttl) || !strings.Contains(r.err, "a token must live for some time") {
			t.Errorf("init --token-ttl %s:\n%s", ttl, r)
		}
	}
	var out, errOut strings.Builder
	if code := runUnreachable(&out, &errOut, "init", "--no-deploy"); code != 1 || out.Len() != 0 || errOut.Len() == 0 {
		t.Errorf("init against no hub: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if r := musterctl("init", "now"); r.code != 1 || !strings.Contains(r.err, `unknown command "now" for "musterctl init"`) {
		t.Errorf("init with an argument:\n%s", r)
	}
}

// describe shows every Muster kind, by any of its names.
func TestDescribeEveryKind(t *testing.T) {
	ns := env.Namespace(t)
	cluster := uniqueName("descall")
	memberNS := memberNamespace(t, cluster)
	sample(t, "workloadspread", ns, "spread")
	sample(t, "membercluster", "", cluster)
	sample(t, "work", memberNS, "hello")
	sample(t, "nodeslice", memberNS, "slice-0")
	sample(t, "broadcastjob", ns, "bcj")
	fleetJob(t, ns, "fj", nil)
	for _, c := range []struct {
		kinds []string
		ns    string
		name  string
		want  []string
	}{
		{[]string{"workloadspreads", "wrs"}, ns, "spread", []string{"Kind: WorkloadSpread", "Spec:", "targetRef:"}},
		{[]string{"works", "work"}, memberNS, "hello", []string{"Kind: Work", "Namespace: " + memberNS, "manifests:"}},
		{[]string{"nodeslices", "nsl"}, memberNS, "slice-0", []string{"Kind: NodeSlice", "clusterName: member1"}},
		{[]string{"mc", "clusters", "membercluster"}, ns, cluster, []string{"Kind: MemberCluster", "accepted: true"}},
		{[]string{"bcj", "broadcastjob"}, ns, "bcj", []string{"Kind: BroadcastJob", "Clusters: <none>", "Shards: <none>"}},
		{[]string{"fj", "fleetjobs"}, ns, "fj", []string{"Kind: FleetJob", "Placement: Divided", "Completions: 2"}},
	} {
		for _, kind := range c.kinds {
			r := musterctl("describe", kind, c.name, "-n", c.ns)
			if r.code != 0 || !hasLine(r.out, "Name: "+c.name) || !hasLine(r.out, "Events: <none>") {
				t.Errorf("describe %s %s:\n%s", kind, c.name, r)
				continue
			}
			for _, w := range c.want {
				if !hasLine(r.out, w) {
					t.Errorf("describe %s %s: no line %q:\n%s", kind, c.name, w, r.out)
				}
			}
		}
	}
	// A namespaced object is looked up in the namespace asked for only.
	if r := musterctl("describe", "fj", "fj", "-n", memberNS); r.code != 1 || !strings.Contains(r.err, `fleetjobs.muster.dev "fj" not found`) {
		t.Errorf("describe in another namespace:\n%s", r)
	}
	if r := musterctl("describe", "fj", "a", "b"); r.code != 1 || !strings.Contains(r.err, "describe needs a kind and one name: musterctl describe KIND NAME") {
		t.Errorf("describe of two names:\n%s", r)
	}
}
