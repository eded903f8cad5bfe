//go:build e2ekind

package kindfleet

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/attacks"
	"github.com/musterhq/muster/e2e/framework"
)

// Hub namespaces the hub admin labelled with a Pod Security level, for the controls.
const (
	kindRestrictedNS = "kind-restricted"
	kindPrivilegedNS = "kind-privileged"
)

// memberJob is a FleetJob placed whole on member1 whose one pod runs the workload for a second.
func memberJob(namespace, name string) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementSingle, Placement: musterv1.Placement{
				ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{fleet.Members[0].Name}},
			}},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), BackoffLimit: ptr.To[int32](0),
				Template: workloadPod("sleep", "1s"),
			}},
		},
	}
}

// TestTenancyOnRealMembers is issue 28's attack table (e2e/attacks) on real clusters: the
// hub refuses each attack with the Pod Security library's message or as a reserved
// namespace; the controls run real containers; and member1's own Pod Security admission
// enforces the level the agent labelled its namespace with.
func TestTenancyOnRealMembers(t *testing.T) {
	muster(t)
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: kindRestrictedNS, Labels: map[string]string{attacks.EnforceLabel: "restricted"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: kindPrivilegedNS, Labels: map[string]string{attacks.EnforceLabel: "privileged"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: musterv1.AgentNamespace}},
	} {
		if err := fleet.Hub.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	t.Run("refused", func(t *testing.T) {
		jobs := attacks.Jobs{
			FleetJob: func(name string) *musterv1.FleetJob { return memberJob(metav1.NamespaceDefault, name) },
			BroadcastJob: func(name string) *musterv1.BroadcastJob {
				return &musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
					Spec: musterv1.BroadcastJobSpec{Placement: ptr.To(members()), Template: workloadPod("sleep", "1s")}}
			},
		}
		for _, row := range attacks.Tenancy(jobs, kindRestrictedNS) {
			t.Run(row.Name, func(t *testing.T) {
				if err := attacks.Refused(t.Context(), fleet.Hub.Client, row); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
	t.Run("FleetJob restricted in a namespace labelled restricted -> runs, and member1 itself refuses a privileged pod there", func(t *testing.T) {
		fj := memberJob(kindRestrictedNS, "restricted")
		attacks.Restricted(&fj.Spec.Template.Spec.Template.Spec)
		runOnMember1(t, fj)
		expectMemberEnforces(t, kindRestrictedNS, "restricted")
	})
	t.Run("FleetJob privileged with hostPID in a namespace labelled privileged -> runs", func(t *testing.T) {
		fj := memberJob(kindPrivilegedNS, "privileged")
		attacks.Privileged(&fj.Spec.Template.Spec.Template.Spec)
		runOnMember1(t, fj)
		expectMemberEnforces(t, kindPrivilegedNS, "privileged")
	})
}

func runOnMember1(t *testing.T, fj *musterv1.FleetJob) {
	t.Helper()
	createOnHub(t, fj)
	if _, err := attacks.WaitComplete(t.Context(), fleet.Hub.Client, client.ObjectKeyFromObject(fj), 3*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// expectMemberEnforces checks that member1's namespace ns was created by the agent with the
// hub namespace's level, and that member1's API server itself refuses there a pod the
// level forbids (a privileged pod with the node's PID namespace) unless it is privileged.
func expectMemberEnforces(t *testing.T, ns, level string) {
	t.Helper()
	ctx := t.Context()
	member := fleet.Members[0]
	var got corev1.Namespace
	if err := member.Client.Get(ctx, client.ObjectKey{Name: ns}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[attacks.EnforceLabel] != level || got.Labels["muster.dev/created-by"] != "muster-agent" {
		t.Errorf("member1's namespace %s has labels %v, want it created by the agent with enforce=%s", ns, got.Labels, level)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "direct-root", Namespace: ns}, Spec: workloadPod("sleep", "1s").Spec}
	attacks.Privileged(&pod.Spec)
	err := member.Client.Create(ctx, pod, client.DryRunAll)
	switch {
	case level == "privileged" && err != nil:
		t.Errorf("member1 refused a privileged pod in its namespace labelled privileged: %v", err)
	case level != "privileged" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "`+level+`:latest"`)):
		t.Errorf("member1's own admission on a privileged pod in %s: got %v, want Forbidden by PodSecurity %q", ns, err, level)
	}
}

// TestNamesCannotBeTakenOnRealMembers runs the name rows of issue 28's attack table on
// kind: namesakes across namespaces both complete, and a cron whose next run's name was
// squatted runs under its alternate name.
//
// Its rows place on member1 only and mostly wait for a minute's slot, so it runs at the
// end beside TestOldCertificateIsRefusedAfterDenyAndRejoinInCluster, which touches member2
// only.
func TestNamesCannotBeTakenOnRealMembers(t *testing.T) {
	t.Parallel()
	muster(t)
	for _, check := range attacks.NameRows(attacks.Names{
		Hub: fleet.Hub.Client, FleetJob: memberJob, Cluster: fleet.Members[0].Name,
		Namespace: metav1.NamespaceDefault, Prefix: "kind",
	}) {
		t.Run(check.Name, func(t *testing.T) {
			t.Parallel()
			if err := check.Run(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestJoinTokenAndCertificateAttacksOnRealHub runs the join rows of issue 28's attack table
// against the hub installed in its kind cluster.
func TestJoinTokenAndCertificateAttacksOnRealHub(t *testing.T) {
	m := muster(t)
	hub := attacks.Hub{Admin: fleet.Hub, JoinArgs: m.JoinArgs, Member: fleet.Members[0].Name,
		Musterctl: func(ctx context.Context, args ...string) (string, error) { return m.Musterctl(ctx, fleet.Hub, args...) }}
	for _, check := range attacks.JoinTokenAndCertificate(hub) {
		t.Run(check.Name, func(t *testing.T) {
			if err := check.Run(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestOldCertificateIsRefusedAfterDenyAndRejoinInCluster denies member2 and readmits it as
// the README says (a join line bound to its name, the join in the member, musterctl
// accept): the in-cluster agent stops for the new join line, its Deployment restarts it,
// and it joins again; the certificate from before the deny stays refused although the
// cluster and its name are the same. It runs last, beside TestNamesCannotBeTakenOnRealMembers
// (on member1): member2 is back when it ends.
func TestOldCertificateIsRefusedAfterDenyAndRejoinInCluster(t *testing.T) {
	t.Parallel()
	m := muster(t)
	ctx := t.Context()
	member := fleet.Members[1]
	old := agentClientFrom(t, member)
	own := types.NamespacedName{Name: member.Name}
	if err := old.Get(ctx, own, &musterv1.MemberCluster{}); err != nil {
		t.Fatalf("before deny the agent's certificate must work: %v", err)
	}
	if _, err := m.Musterctl(ctx, fleet.Hub, "deny", member.Name); err != nil {
		t.Fatal(err)
	}
	err := framework.Until(ctx, 30*time.Second, "the old certificate to be refused", func(ctx context.Context) (bool, string, error) {
		err := old.Get(ctx, own, &musterv1.MemberCluster{})
		return apierrors.IsForbidden(err), errString(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Musterctl(ctx, fleet.Hub, "token", "create", "--cluster", member.Name)
	if err != nil {
		t.Fatal(err)
	}
	token, err := attacks.JoinToken(strings.Fields(out))
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, m.JoinArgs...), "--cluster-name", member.Name, "--image", agentImage, "--hub-token", token)
	if _, err := m.Musterctl(ctx, member, args...); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Musterctl(ctx, fleet.Hub, "accept", member.Name, "--wait", "3m"); err != nil {
		t.Fatalf("%v\nagent log:\n%s", err, agentLog(ctx, member))
	}
	for _, cond := range []string{musterv1.MemberClusterJoined, musterv1.MemberClusterAvailable} {
		if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, member.Name, cond, metav1.ConditionTrue, 3*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	err = framework.Until(ctx, time.Minute, "the readmitted agent's certificate to work", func(ctx context.Context) (bool, string, error) {
		err := agentClientFrom(t, member).Get(ctx, own, &musterv1.MemberCluster{})
		return err == nil, errString(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A certificate that expired meanwhile is refused before RBAC is asked (Unauthorized).
	switch err := old.Get(ctx, own, &musterv1.MemberCluster{}); {
	case apierrors.IsForbidden(err):
		t.Logf("the certificate from before the deny, still valid, is Forbidden after the re-join")
	case apierrors.IsUnauthorized(err):
		t.Logf("the certificate from before the deny expired meanwhile: Unauthorized")
	default:
		t.Errorf("the certificate from before the deny after the re-join: got %v, want Forbidden", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
