//go:build e2ekind

package kindfleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/registration"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/hub"
)

const (
	// outage is how long the member's node container stays stopped.
	outage = 60 * time.Second
	// restartAllowance is how long the member may take, once started, to serve again and
	// run its agent, which then renews its certificate if it is due.
	restartAllowance = 90 * time.Second
	// jobStartAllowance is how long the job takes to run a pod in the member.
	jobStartAllowance = 20 * time.Second
)

// TestMemberNodeStoppedForAMinuteComesBackAndItsWorkCompletes stops member2's node
// container (its whole cluster) for a minute while its shard of an Indexed job runs: the
// hub marks member2 Unknown and taints it; started again at another address (a container
// took its old one meanwhile), the node follows it, member2 becomes Available and
// untainted, and every fleet index of the job succeeds exactly once.
//
// The agent certificates of this fleet last signingDuration. An agent whose certificate
// expired while its cluster was down must be accepted again (by design), so the node is
// stopped right after the agent renewed: a whole lifetime then covers the outage and the
// restart, whatever the moment the test starts at.
func TestMemberNodeStoppedForAMinuteComesBackAndItsWorkCompletes(t *testing.T) {
	muster(t)
	ctx := t.Context()
	member := fleet.Members[1]
	waitAgentCertificateLeft(t, member, outage+restartAllowance+jobStartAllowance)

	// Every index at once (two per member): member2's two pods are cut off together and
	// run again together once it is back, rather than one after the other.
	const completions = 4
	fj := indexed(dividedJob("outage", completions, completions, "sleep", "30s"))
	createOnHub(t, fj)
	waitJobPodRunning(t, member, fj.Name)
	left := agentCertificateLeft(t, member)
	if left < outage+restartAllowance {
		t.Fatalf("%s's agent certificate has %s left, less than the outage and restart need (%s)", member.Name, left, outage+restartAllowance)
	}

	before := apiServerAddress(t, member)
	if err := fleet.StopCluster(ctx, member); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = fleet.StartCluster(context.Background(), member)
		}
	})
	t.Logf("%s's node stopped; its agent certificate has %s left", member.Name, left.Round(time.Second))
	takeStoppedNodesAddress(t)
	if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, member.Name, musterv1.MemberClusterAvailable, metav1.ConditionUnknown, outage); err != nil {
		t.Fatal(err)
	}
	// The condition (status) and the taint (spec) are two writes: wait for the second.
	err := framework.Until(ctx, 10*time.Second, member.Name+" to be tainted "+musterv1.UnreachableTaintKey, func(context.Context) (bool, string, error) {
		return tainted(t, member.Name), "Unknown but not tainted", nil
	})
	if err != nil {
		t.Error(err)
	}
	t.Logf("%s Unknown and tainted %s after its node stopped (the hub's grace period: %s without a Lease renewal)",
		member.Name, time.Since(stopped).Round(time.Second), hub.NewOptions().ClusterGracePeriod)

	select {
	case <-time.After(time.Until(stopped.Add(outage))):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if err := fleet.StartCluster(ctx, member); err != nil {
		t.Fatal(err)
	}
	restarted = true
	started := time.Now()
	after := apiServerAddress(t, member)
	t.Logf("%s's node started; its API server was at %s, is at %s", member.Name, before, after)
	if after == before {
		t.Errorf("%s's node came back at its old address %s: the restart did not test following a new one", member.Name, before)
	}
	if err := framework.WaitForClusterReady(ctx, member, 1, restartAllowance); err != nil {
		t.Fatalf("%v\n%s", err, nodeDiagnostics(ctx, member))
	}
	t.Logf("%s's API server ready %s after its node started", member.Name, time.Since(started).Round(time.Second))
	if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, member.Name, musterv1.MemberClusterAvailable, metav1.ConditionTrue, restartAllowance); err != nil {
		t.Fatalf("%v\nagent log:\n%s", err, agentLog(ctx, member))
	}
	err = framework.Until(ctx, 30*time.Second, member.Name+" to lose its taint "+musterv1.UnreachableTaintKey, func(context.Context) (bool, string, error) {
		return !tainted(t, member.Name), "tainted", nil
	})
	if err != nil {
		t.Error(err)
	}
	t.Logf("%s Available and untainted again %s after its node started", member.Name, time.Since(started).Round(time.Second))

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("what the hub and %s say:\n%s", member.Name, outageDiagnostics(context.Background(), fj, member))
		}
	})
	waitComplete(t, fj, 4*time.Minute, nil)
	t.Logf("FleetJob %s complete %s after the node started", fj.Name, time.Since(started).Round(time.Second))
	wantEachIndexSucceededOnce(t, fj.Name, completions)
}

// waitAgentCertificateLeft waits until member m's agent holds a certificate with at least
// want of its lifetime left: with want close to signingDuration, until it has just renewed.
func waitAgentCertificateLeft(t *testing.T, m *framework.Cluster, want time.Duration) {
	t.Helper()
	if want >= signingDuration {
		t.Fatalf("no certificate of %s can have %s left", signingDuration, want)
	}
	start := time.Now()
	err := framework.Until(t.Context(), signingDuration, fmt.Sprintf("%s's agent certificate to have %s left", m.Name, want), func(ctx context.Context) (bool, string, error) {
		left, err := certificateLeft(ctx, m)
		if err != nil {
			return false, err.Error(), nil
		}
		return left >= want, fmt.Sprintf("%s left", left.Round(time.Second)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("waited %s for %s's agent to renew its certificate", time.Since(start).Round(time.Second), m.Name)
}

func agentCertificateLeft(t *testing.T, m *framework.Cluster) time.Duration {
	t.Helper()
	left, err := certificateLeft(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// certificateLeft is the remaining lifetime of the certificate in member m's credentials
// Secret, the one its agent authenticates with, also after a restart.
func certificateLeft(ctx context.Context, m *framework.Cluster) (time.Duration, error) {
	store := registration.Store{Client: m.Clientset, Namespace: musterv1.AgentNamespace}
	creds, err := store.ReadCredentials(ctx)
	if err != nil {
		return 0, err
	}
	if creds == nil {
		return 0, fmt.Errorf("%s has no agent credentials", m.Name)
	}
	cert, err := creds.Certificate()
	if err != nil {
		return 0, err
	}
	return time.Until(cert.Leaf.NotAfter), nil
}

// takeStoppedNodesAddress starts a container on the kind network while a node is down.
// Docker gives it the lowest free address, the one the stopped node left, so the node
// comes back at another address, as after a host reboot: its entrypoint must follow it.
func takeStoppedNodesAddress(t *testing.T) {
	t.Helper()
	name := "muster-e2e-address-taker"
	// A run stopped in the middle of this test leaves its container behind.
	_ = exec.CommandContext(t.Context(), "docker", "rm", "-f", name).Run()
	out, err := exec.CommandContext(t.Context(), "docker", "run", "-d", "--name", name, "--network", "kind", workload, "sleep", "10m").CombinedOutput()
	if err != nil {
		t.Fatalf("docker run %s: %v: %s", name, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", name).Run() })
}

// apiServerAddress is member m's API server on the kind network.
func apiServerAddress(t *testing.T, m *framework.Cluster) string {
	t.Helper()
	url, err := fleet.Provider.(*kind.Provider).InternalAPIServer(m.Name)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func tainted(t *testing.T, cluster string) bool {
	t.Helper()
	var mc musterv1.MemberCluster
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKey{Name: cluster}, &mc); err != nil {
		t.Fatal(err)
	}
	for _, taint := range mc.Spec.Taints {
		if taint.Key == musterv1.UnreachableTaintKey {
			return true
		}
	}
	return false
}

// nodeDiagnostics is what a node that does not serve again says: its entrypoint's output
// and its control-plane containers, for failures.
func nodeDiagnostics(ctx context.Context, m *framework.Cluster) string {
	node := kind.NamePrefix + m.Name + "-control-plane"
	var out strings.Builder
	for _, args := range [][]string{
		{"logs", "--tail", "30", node},
		{"exec", node, "crictl", "ps", "-a"},
		{"exec", node, "journalctl", "-u", "kubelet", "--no-pager", "-n", "30"},
		{"exec", node, "sh", "-c", "for c in $(crictl ps -a -q --name 'etcd|kube-apiserver'); do crictl logs --tail 15 $c 2>&1; done"},
	} {
		raw, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		fmt.Fprintf(&out, "--- docker %s (err %v)\n%s\n", strings.Join(args, " "), err, raw)
	}
	return out.String()
}

// outageDiagnostics says where a job stuck after an outage stands: the FleetJob's status,
// the member's MemberCluster conditions, its Job pods and its agent's log.
func outageDiagnostics(ctx context.Context, fj *musterv1.FleetJob, m *framework.Cluster) string {
	var out strings.Builder
	var got musterv1.FleetJob
	if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err == nil {
		raw, _ := json.MarshalIndent(got.Status, "", "  ")
		fmt.Fprintf(&out, "--- FleetJob %s status\n%s\n", fj.Name, raw)
	}
	var mc musterv1.MemberCluster
	if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: m.Name}, &mc); err == nil {
		raw, _ := json.MarshalIndent(mc.Status.Conditions, "", "  ")
		fmt.Fprintf(&out, "--- MemberCluster %s conditions\n%s\n", m.Name, raw)
	}
	if pods, err := jobPodsIn(ctx, m, fj.Name); err == nil {
		for _, p := range pods {
			fmt.Fprintf(&out, "--- pod %s: %s (deleted %v)\n", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
		}
	}
	out.WriteString(agentLog(ctx, m))
	return out.String()
}
