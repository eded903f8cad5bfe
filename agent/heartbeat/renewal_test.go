package heartbeat_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/agent/heartbeat"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const interval = time.Second

// member creates the member namespace of cluster on the hub.
func member(t *testing.T, cluster string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(cluster)}}
	if err := env.Client.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
}

// start runs a renewer for cluster with cfg's credentials until stop is called or the test
// ends; stopped is closed when Start has returned.
func start(t *testing.T, cfg *rest.Config, cluster string, every time.Duration) (stop func(), stopped <-chan struct{}) {
	t.Helper()
	return startIn(t, t.Context(), cfg, cluster, every)
}

// startCounting is start, and counts the failed renewals the renewer logs.
func startCounting(t *testing.T, cfg *rest.Config, cluster string, every time.Duration) (failures func() int) {
	t.Helper()
	var n atomic.Int32
	logger := funcr.New(func(_, args string) {
		if strings.Contains(args, `"msg"="renewing the hub lease"`) && strings.Contains(args, `"error"=`) {
			n.Add(1)
		}
	}, funcr.Options{})
	startIn(t, log.IntoContext(t.Context(), logger), cfg, cluster, every)
	return func() int { return int(n.Load()) }
}

func startIn(t *testing.T, parent context.Context, cfg *rest.Config, cluster string, every time.Duration) (stop func(), stopped <-chan struct{}) {
	t.Helper()
	hub, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &heartbeat.Renewer{Hub: hub, Cluster: cluster, Holder: "agent-" + cluster, Interval: every}
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Start(ctx); err != nil {
			t.Errorf("Start returned %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return cancel, done
}

func getLease(t *testing.T, cluster string) (*coordinationv1.Lease, error) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: musterv1.MemberNamespace(cluster), Name: heartbeat.LeaseName}, lease)
	return lease, err
}

// waitForLease waits until the Lease of cluster exists and accept holds for it.
func waitForLease(t *testing.T, cluster string, within time.Duration, accept func(*coordinationv1.Lease) bool) *coordinationv1.Lease {
	t.Helper()
	var got *coordinationv1.Lease
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, within, true, func(context.Context) (bool, error) {
		lease, err := getLease(t, cluster)
		if err != nil {
			return false, nil
		}
		got = lease
		return accept(lease), nil
	})
	if err != nil {
		t.Fatalf("lease of %s not as wanted within %s; last seen: %+v", cluster, within, got)
	}
	return got
}

func anyLease(*coordinationv1.Lease) bool { return true }

func renewedAfter(t time.Time) func(*coordinationv1.Lease) bool {
	return func(l *coordinationv1.Lease) bool { return l.Spec.RenewTime != nil && l.Spec.RenewTime.After(t) }
}

func TestRenewerCreatesTheLeaseInTheMemberNamespace(t *testing.T) {
	member(t, "create")
	start(t, env.Config, "create", interval)
	lease := waitForLease(t, "create", 10*time.Second, anyLease)
	if lease.Namespace != "muster-member-create" || lease.Name != heartbeat.LeaseName {
		t.Fatalf("lease at %s/%s, want muster-member-create/%s", lease.Namespace, lease.Name, heartbeat.LeaseName)
	}
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity != "agent-create" {
		t.Errorf("holder %v, want agent-create", spec.HolderIdentity)
	}
	if spec.LeaseDurationSeconds == nil || *spec.LeaseDurationSeconds != 1 {
		t.Errorf("lease duration %v, want the interval, 1s", spec.LeaseDurationSeconds)
	}
	if spec.AcquireTime == nil || spec.RenewTime == nil || !spec.AcquireTime.Equal(spec.RenewTime) {
		t.Errorf("a new lease has acquire time %v and renew time %v, want both set and equal", spec.AcquireTime, spec.RenewTime)
	}
}

// TestRenewerRenewsAtItsInterval watches the renew time: it moves forward, never sooner
// than the interval after the last renewal and, on a hub that answers, not much later.
func TestRenewerRenewsAtItsInterval(t *testing.T) {
	member(t, "renew")
	start(t, env.Config, "renew", interval)
	first := waitForLease(t, "renew", 10*time.Second, anyLease)
	acquired := first.Spec.AcquireTime.Time
	last := first.Spec.RenewTime.Time
	for range 3 {
		lease := waitForLease(t, "renew", 5*time.Second, renewedAfter(last))
		renewed := lease.Spec.RenewTime.Time
		if gap := renewed.Sub(last); gap < interval-time.Millisecond || gap > interval+2*time.Second {
			t.Errorf("renewed %s after the last renewal, want about the interval %s", gap, interval)
		}
		if !lease.Spec.AcquireTime.Time.Equal(acquired) || lease.UID != first.UID {
			t.Errorf("a renewal replaced the lease or its acquire time (%v, want %v)", lease.Spec.AcquireTime, acquired)
		}
		last = renewed
	}
}

func TestDeletedLeaseIsCreatedAgain(t *testing.T) {
	member(t, "deleted")
	start(t, env.Config, "deleted", interval)
	old := waitForLease(t, "deleted", 10*time.Second, anyLease)
	if err := env.Client.Delete(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	fresh := waitForLease(t, "deleted", 5*time.Second, func(l *coordinationv1.Lease) bool { return l.UID != old.UID })
	if !fresh.Spec.AcquireTime.After(old.Spec.AcquireTime.Time) {
		t.Errorf("the new lease keeps acquire time %v, want one after %v", fresh.Spec.AcquireTime, old.Spec.AcquireTime)
	}
}

// TestRefusedRenewalIsRetriedWithinASecond runs the renewer as an agent whose RBAC has not
// been written yet, with an interval of an hour: the hub refuses it until the Role and
// binding exist, then the Lease appears after about a second, not an hour; once it has
// succeeded the renewer waits its interval again.
func TestRefusedRenewalIsRetriedWithinASecond(t *testing.T) {
	const cluster = "refused"
	member(t, cluster)
	ns := musterv1.MemberNamespace(cluster)
	agent := rest.CopyConfig(env.Config)
	agent.Impersonate = rest.ImpersonationConfig{UserName: "muster:agent:" + cluster}
	failures := startCounting(t, agent, cluster, time.Hour)

	hub, err := kubernetes.NewForConfig(agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.CoordinationV1().Leases(ns).Get(t.Context(), heartbeat.LeaseName, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the agent without a Role reads its lease with error %v, want Forbidden", err)
	}
	// Two refusals, a second apart: the renewer has tried and been refused, and retries.
	envtest.Eventually(t, "two refused renewals", func() (bool, string) { return failures() >= 2, fmt.Sprint(failures()) })
	if _, err := getLease(t, cluster); !apierrors.IsNotFound(err) {
		t.Fatalf("lease exists although the hub refused the agent: %v", err)
	}

	granted := time.Now()
	grant(t, ns, "muster:agent:"+cluster)
	lease := waitForLease(t, cluster, 5*time.Second, anyLease)
	if took := lease.Spec.RenewTime.Sub(granted); took > 3*time.Second {
		t.Errorf("lease made %s after the grant, want within about a second", took)
	}
	// Time has to pass for this one: two retry intervals, in which a renewer still on its
	// retry spacing would have renewed twice more; the one on its interval renews no more.
	time.Sleep(2 * time.Second)
	again, err := getLease(t, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Spec.RenewTime.Equal(lease.Spec.RenewTime) {
		t.Errorf("renewed again at %v, within its hour-long interval", again.Spec.RenewTime)
	}
}

// grant gives user the lease verbs the hub's registration grants an agent in ns.
func grant(t *testing.T, ns, user string) {
	t.Helper()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"get", "create", "update"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := env.Client.Create(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(t.Context(), binding); err != nil {
		t.Fatal(err)
	}
}

// TestRenewerStopsWithItsContext: Start returns when its context ends and the Lease is
// renewed no more, so the hub sees the agent go quiet.
func TestRenewerStopsWithItsContext(t *testing.T) {
	member(t, "stops")
	stop, stopped := start(t, env.Config, "stops", interval)
	waitForLease(t, "stops", 10*time.Second, anyLease)
	stop()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
	last, err := getLease(t, "stops")
	if err != nil {
		t.Fatal(err)
	}
	// Start has returned, so nothing of the renewer runs; time has to pass to show the
	// hub what it sees: two intervals, in which the running renewer renewed twice (see
	// TestRenewerRenewsAtItsInterval), bring no renewal.
	time.Sleep(2 * interval)
	now, err := getLease(t, "stops")
	if err != nil {
		t.Fatal(err)
	}
	if !now.Spec.RenewTime.Equal(last.Spec.RenewTime) {
		t.Errorf("lease renewed at %v after the renewer stopped", now.Spec.RenewTime)
	}
}
