package heartbeat_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
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

// start runs a renewer for cluster with cfg's credentials, on the real clock, until stop is
// called or the test ends; stopped is closed when Start has returned.
func start(t *testing.T, cfg *rest.Config, cluster string, every time.Duration) (stop func(), stopped <-chan struct{}) {
	t.Helper()
	return startIn(t, t.Context(), cfg, cluster, every, nil)
}

// startOn is start on clk.
func startOn(t *testing.T, clk clock.Clock, cfg *rest.Config, cluster string, every time.Duration) (stop func(), stopped <-chan struct{}) {
	t.Helper()
	return startIn(t, t.Context(), cfg, cluster, every, clk)
}

// startCounting is startOn, and counts the failed renewals the renewer logs.
func startCounting(t *testing.T, clk clock.Clock, cfg *rest.Config, cluster string, every time.Duration) (failures func() int) {
	t.Helper()
	var n atomic.Int32
	logger := funcr.New(func(_, args string) {
		if strings.Contains(args, `"msg"="renewing the hub lease"`) && strings.Contains(args, `"error"=`) {
			n.Add(1)
		}
	}, funcr.Options{})
	startIn(t, log.IntoContext(t.Context(), logger), cfg, cluster, every, clk)
	return func() int { return int(n.Load()) }
}

func startIn(t *testing.T, parent context.Context, cfg *rest.Config, cluster string, every time.Duration, clk clock.Clock) (stop func(), stopped <-chan struct{}) {
	t.Helper()
	hub, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &heartbeat.Renewer{Hub: hub, Cluster: cluster, Holder: "agent-" + cluster, Interval: every, Clock: clk}
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

// fakeClock starts at the real time, to the microsecond a Lease's times keep, so that the
// renew times the renewer stamps from it compare equal to the times the test steps to.
func fakeClock() *clocktesting.FakeClock {
	return clocktesting.NewFakeClock(time.Now().Truncate(time.Microsecond))
}

// waitWaiting waits until the renewer on clk has finished its pass and waits on clk for
// the next: a step of the clock from then on is one it sees.
func waitWaiting(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	envtest.Eventually(t, "the renewer waiting for its next pass", func() (bool, string) { return clk.HasWaiters(), "not waiting" })
}

// watchRenewals watches the Lease of cluster from lease's version on and returns the renew
// times of the writes that follow, up to and including the first at or after until.
func watchRenewals(t *testing.T, lease *coordinationv1.Lease) (upTo func(until time.Time) []time.Time) {
	t.Helper()
	hub, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	w, err := hub.CoordinationV1().Leases(lease.Namespace).Watch(t.Context(), metav1.ListOptions{
		ResourceVersion: lease.ResourceVersion,
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", lease.Name).String(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return func(until time.Time) []time.Time {
		t.Helper()
		var renewals []time.Time
		timeout := time.After(15 * time.Second)
		for {
			select {
			case ev := <-w.ResultChan():
				l, ok := ev.Object.(*coordinationv1.Lease)
				if ev.Type != watch.Modified || !ok || l.Spec.RenewTime == nil {
					t.Fatalf("watching the lease: %s %+v", ev.Type, ev.Object)
				}
				renewals = append(renewals, l.Spec.RenewTime.Time)
				if !l.Spec.RenewTime.Time.Before(until) {
					return renewals
				}
			case <-timeout:
				t.Fatalf("no renewal at %v; renewals seen: %v", until, renewals)
			}
		}
	}
}

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
// been written yet, with an interval of an hour, on a clock the test steps: the hub refuses
// it until the Role and binding exist, and it retries a second later, not an hour; the
// retry after the grant makes the Lease; once it has succeeded the renewer waits its
// interval again.
func TestRefusedRenewalIsRetriedWithinASecond(t *testing.T) {
	const cluster = "refused"
	member(t, cluster)
	ns := musterv1.MemberNamespace(cluster)
	agent := rest.CopyConfig(env.Config)
	agent.Impersonate = rest.ImpersonationConfig{UserName: "muster:agent:" + cluster}
	clk := fakeClock()
	failures := startCounting(t, clk, agent, cluster, time.Hour)

	hub, err := kubernetes.NewForConfig(agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.CoordinationV1().Leases(ns).Get(t.Context(), heartbeat.LeaseName, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("the agent without a Role reads its lease with error %v, want Forbidden", err)
	}
	// Two refusals, a second apart: the renewer has tried and been refused, and retries
	// when the clock has moved the retry interval.
	envtest.Eventually(t, "a refused renewal", func() (bool, string) { return failures() >= 1, fmt.Sprint(failures()) })
	waitWaiting(t, clk)
	clk.Step(time.Second)
	envtest.Eventually(t, "two refused renewals", func() (bool, string) { return failures() >= 2, fmt.Sprint(failures()) })
	if _, err := getLease(t, cluster); !apierrors.IsNotFound(err) {
		t.Fatalf("lease exists although the hub refused the agent: %v", err)
	}

	grant(t, ns, "muster:agent:"+cluster)
	// The grant holds once the API server's authorizer has seen it; from then on, the next
	// retry is the one that must make the Lease.
	envtest.Eventually(t, "the agent may read its lease", func() (bool, string) {
		_, err := hub.CoordinationV1().Leases(ns).Get(t.Context(), heartbeat.LeaseName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	waitWaiting(t, clk)
	granted := clk.Now()
	clk.Step(time.Second)
	lease := waitForLease(t, cluster, 5*time.Second, anyLease)
	if took := lease.Spec.RenewTime.Sub(granted); took > time.Second {
		t.Errorf("lease made %s after the grant, want within the retry interval, a second", took)
	}
	// Two retry intervals, in which a renewer still on its retry spacing would renew twice
	// more, then the rest of the hour: the one on its interval renews once, at the hour.
	renewals := watchRenewals(t, lease)
	waitWaiting(t, clk)
	clk.Step(2 * time.Second)
	waitWaiting(t, clk)
	clk.Step(time.Hour - 2*time.Second)
	want := lease.Spec.RenewTime.Add(time.Hour)
	if got := renewals(want); len(got) != 1 || !got[0].Equal(want) {
		t.Errorf("renewed at %v after the first renewal at %v, want once, an hour later", got, lease.Spec.RenewTime)
	}
}

// leaseRequests counts the requests for Leases a client sends, by HTTP method.
type leaseRequests struct {
	next http.RoundTripper
	mu   sync.Mutex
	sent map[string]int
}

func (l *leaseRequests) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/leases") {
		l.mu.Lock()
		l.sent[req.Method]++
		l.mu.Unlock()
	}
	return l.next.RoundTrip(req)
}

func (l *leaseRequests) count() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.sent)
}

// TestARenewalIsOneWrite: once the Lease is made, each renewal updates it from what the
// last one wrote, without reading it (two requests per renewal would double the load a
// thousand agents put on the hub); when someone else wrote the Lease in between, the
// renewal reads it afresh and still lands in the same pass.
func TestARenewalIsOneWrite(t *testing.T) {
	const cluster = "one-write"
	member(t, cluster)
	requests := &leaseRequests{sent: map[string]int{}}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { requests.next = rt; return requests })
	clk := fakeClock()
	startOn(t, clk, cfg, cluster, interval)
	lease := waitForLease(t, cluster, 10*time.Second, anyLease)
	renewals := watchRenewals(t, lease)
	for i := 1; i <= 3; i++ {
		waitWaiting(t, clk)
		clk.Step(interval)
		renewals(lease.Spec.RenewTime.Add(time.Duration(i) * interval))
	}
	// The first pass read the Lease (absent) and made it; the three renewals wrote it.
	if got, want := requests.count(), map[string]int{http.MethodGet: 1, http.MethodPost: 1, http.MethodPut: 3}; !maps.Equal(got, want) {
		t.Errorf("Lease requests by method %v, want %v", got, want)
	}

	// Another writer moves the Lease on: the renewal's update conflicts, and it reads the
	// Lease and writes it in the same pass, without waiting for the retry.
	current, err := getLease(t, cluster)
	if err != nil {
		t.Fatal(err)
	}
	current.Labels = map[string]string{"touched": "true"}
	if err := env.Client.Update(t.Context(), current); err != nil {
		t.Fatal(err)
	}
	renewals = watchRenewals(t, current)
	waitWaiting(t, clk)
	clk.Step(interval)
	want := lease.Spec.RenewTime.Add(4 * interval)
	if got := renewals(want); len(got) != 1 || !got[0].Equal(want) {
		t.Errorf("renewed at %v after another writer's update, want once, at %v", got, want)
	}
	if got, want := requests.count(), map[string]int{http.MethodGet: 2, http.MethodPost: 1, http.MethodPut: 5}; !maps.Equal(got, want) {
		t.Errorf("Lease requests by method %v after the conflict, want %v", got, want)
	}
}

// hubAs is the hub as user sees it, as an agent's certificate names it.
func hubAs(t *testing.T, user string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	hub, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hub
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
	clk := fakeClock()
	stop, stopped := startOn(t, clk, env.Config, "stops", interval)
	first := waitForLease(t, "stops", 10*time.Second, anyLease)
	// Running, the renewer renews when the clock passes its interval.
	waitWaiting(t, clk)
	clk.Step(interval)
	last := waitForLease(t, "stops", 5*time.Second, renewedAfter(first.Spec.RenewTime.Time))
	stop()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
	// Start has returned and nothing of the renewer waits on the clock any more, so two
	// intervals passing, which would bring the running renewer two renewals, bring none.
	if clk.HasWaiters() {
		t.Error("the stopped renewer still waits on the clock for its next pass")
	}
	clk.Step(2 * interval)
	now, err := getLease(t, "stops")
	if err != nil {
		t.Fatal(err)
	}
	if !now.Spec.RenewTime.Equal(last.Spec.RenewTime) {
		t.Errorf("lease renewed at %v after the renewer stopped", now.Spec.RenewTime)
	}
}

// TestSilenceCountsFromTheLastRenewalThatSucceeded: the silence an agent fences its work
// by grows from the renewer's start while the hub refuses it, falls to nothing when a
// renewal succeeds, and grows again from that renewal, not from the refusals since.
func TestSilenceCountsFromTheLastRenewalThatSucceeded(t *testing.T) {
	const cluster = "silence"
	member(t, cluster)
	ns := musterv1.MemberNamespace(cluster)
	hub := hubAs(t, "muster:agent:"+cluster)
	clk := fakeClock()
	r := &heartbeat.Renewer{Hub: hub, Cluster: cluster, Holder: "agent-" + cluster, Interval: time.Hour, Clock: clk}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = r.Start(ctx) }()
	waitWaiting(t, clk)
	clk.Step(5 * time.Second)
	if got := r.Silence(); got != 5*time.Second {
		t.Errorf("silence %s after 5s of refused renewals, want 5s, from the start", got)
	}
	grant(t, ns, "muster:agent:"+cluster)
	envtest.Eventually(t, "a renewal that succeeds", func() (bool, string) {
		waitWaiting(t, clk)
		clk.Step(time.Second)
		waitWaiting(t, clk)
		return r.Silence() < time.Second, r.Silence().String()
	})
	clk.Step(10 * time.Minute)
	if got := r.Silence(); got != 10*time.Minute {
		t.Errorf("silence %s, 10m after the renewal, want 10m", got)
	}
}

// TestARestartedAgentCountsItsSilenceFromItsLastRenewal: the renewer records each renewal
// that succeeded in the member (here the same API server); a renewer started again while
// the hub refuses it counts its silence from that renewal, not from its own start, so an
// agent restarted while cut off stops fenced work no later than the one before it would.
func TestARestartedAgentCountsItsSilenceFromItsLastRenewal(t *testing.T) {
	const cluster = "restarted"
	member(t, cluster)
	ns := musterv1.MemberNamespace(cluster)
	grant(t, ns, "muster:agent:"+cluster)
	memberClient, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	checkpoint := &heartbeat.Checkpoint{Member: memberClient, Namespace: ns}
	hub := hubAs(t, "muster:agent:"+cluster)
	first := &heartbeat.Renewer{Hub: hub, Cluster: cluster, Holder: "first", Interval: time.Hour, Checkpoint: checkpoint}
	ctx, cancel := context.WithCancel(t.Context())
	go func() { _ = first.Start(ctx) }()
	lease := waitForLease(t, cluster, 10*time.Second, anyLease)
	var recorded *coordinationv1.Lease
	envtest.Eventually(t, "the renewal recorded in the member", func() (bool, string) {
		recorded, err = memberClient.CoordinationV1().Leases(ns).Get(t.Context(), heartbeat.CheckpointName, metav1.GetOptions{})
		return err == nil && recorded.Spec.RenewTime != nil, fmt.Sprint(err)
	})
	cancel()
	if !recorded.Spec.RenewTime.Equal(lease.Spec.RenewTime) {
		t.Errorf("the member records %v, the hub's lease says %v; want the same renewal", recorded.Spec.RenewTime, lease.Spec.RenewTime)
	}

	// Ten minutes later the agent starts again and the hub refuses it.
	clk := clocktesting.NewFakeClock(recorded.Spec.RenewTime.Add(10 * time.Minute))
	hubRefusing := hubAs(t, "muster:agent:nobody")
	// Asked before its renewer runs (a Job controller's round can come first), it
	// already counts from there.
	second := &heartbeat.Renewer{Hub: hubRefusing, Cluster: cluster, Holder: "second", Interval: time.Hour, Clock: clk, Checkpoint: checkpoint}
	if got := second.Silence(); got != 10*time.Minute {
		t.Errorf("the restarted agent's silence is %s; want 10m, since the renewal the first one recorded", got)
	}
}
