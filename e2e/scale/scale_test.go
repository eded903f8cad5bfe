//go:build e2e

// Package scale runs a small configuration of the scale harness (e2e/fleetsim, which
// `make bench-scale` drives at a thousand members) against a hub of its own, so that the
// harness cannot rot unnoticed: simulated members join through the real path and become
// Available, renew their Leases at a priority level of their own, report their nodes, run a Divided FleetJob placed over them and a
// BroadcastJob over all their nodes to completion, restart all at once and go on with their work without rewriting a slice, write only the
// slice a node changed in, and one that stops renewing its Lease is marked unreachable
// within the grace period while none of the others ever is.
package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/heartbeat"
	"github.com/musterhq/muster/agent/inventory"
	"github.com/musterhq/muster/api/nodeshape"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/fleetsim"
	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

const (
	members        = 20
	nodesPerMember = 600 // two NodeSlices each
	// grace is the hub's --cluster-grace-period here, and renew the simulated agents'
	// Lease interval: short, so that the lost member is noticed in seconds.
	grace = 10 * time.Second
	renew = 2 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{
		Name:    "scale",
		HubArgs: []string{"--auto-accept-clusters", "--cluster-grace-period=" + grace.String()},
	}, &fleet, &muster))
}

// TestASimulatedFleetJoinsRunsAJobAndLosesAMember is the harness's scenarios in small.
func TestASimulatedFleetJoinsRunsAJobAndLosesAMember(t *testing.T) {
	ctx := t.Context()
	boot, err := fleetsim.Discover(ctx, muster.JoinArgs)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := fleetsim.New(fleetsim.Config{
		Prefix: "sim", Members: members, NodesPerMember: nodesPerMember, Parallel: 8,
		RenewInterval: renew, JobDuration: 2 * time.Second, QPS: 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)

	start := time.Now()
	if err := sim.Join(ctx, run, boot); err != nil {
		t.Fatal(err)
	}
	waitAvailable(t, members)
	t.Logf("%d simulated members joined and Available in %s", members, time.Since(start).Round(100*time.Millisecond))

	t.Run("an agent's Lease renewals have a priority level of their own, its other requests not", func(t *testing.T) {
		var level flowcontrolv1.PriorityLevelConfiguration
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: heartbeatLevel}, &level); err != nil {
			t.Fatal(err)
		}
		m := sim.Members[0]
		levels := &priorityLevels{seen: map[string]types.UID{}}
		cfg := m.HubConfig()
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { levels.next = rt; return levels })
		hub, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		leases := hub.CoordinationV1().Leases(musterv1.MemberNamespace(m.Name))
		// The simulated agent renews the same Lease every few seconds.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			lease, err := leases.Get(ctx, heartbeat.LeaseName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// The agent's MemberCluster, which it reads as it reports: its traffic but not its
		// heartbeat.
		if _, err := hub.RESTClient().Get().AbsPath("/apis", musterv1.GroupVersion.Group, musterv1.GroupVersion.Version, "memberclusters", m.Name).DoRaw(ctx); err != nil {
			t.Fatal(err)
		}
		for request, want := range map[string]bool{"GET leases": true, "PUT leases": true, "GET memberclusters": false} {
			switch got := levels.seen[request]; {
			case got == "":
				t.Errorf("%s: the hub's API server named no priority level", request)
			case (got == level.UID) != want:
				t.Errorf("%s ran at priority level %s; in %s (%s): %t, want %t", request, got, heartbeatLevel, level.UID, got == level.UID, want)
			}
		}
	})
	if err := sim.Report(ctx); err != nil {
		t.Fatal(err)
	}
	sim.AnswerWorks(run)
	t.Run("a Divided FleetJob over every member completes", func(t *testing.T) {
		fj := fleetsim.DividedJob(metav1.NamespaceDefault, "over-all", members)
		if err := fleet.Hub.Client.Create(ctx, fj); err != nil {
			t.Fatal(err)
		}
		got := waitComplete(t, fj)
		// The hub divides by the nodes it has loaded when it places, which the slices just
		// written may not all be yet: how many clusters got a share varies, the total not.
		if got.Status.Succeeded != members {
			t.Errorf("complete with %d succeeded, want %d", got.Status.Succeeded, members)
		}
		t.Logf("placed on %d of %d members", len(got.Status.Clusters), members)
		if n := sim.StatusFailures(); n != 0 {
			t.Errorf("the hub refused %d Work status writes of the simulated agents", n)
		}
	})
	t.Run("a BroadcastJob over every node completes with every fitting node counted", func(t *testing.T) {
		job := fleetsim.BroadcastJob(metav1.NamespaceDefault, "every-node")
		if err := fleet.Hub.Client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		want := int32(0)
		for _, m := range sim.Members {
			want += m.Fitting(&job.Spec.Template.Spec)
		}
		var got musterv1.BroadcastJob
		err := framework.Until(ctx, 2*time.Minute, "BroadcastJob every-node to complete", func(ctx context.Context) (bool, string, error) {
			if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(job), &got); err != nil {
				return false, err.Error(), nil
			}
			return got.Status.Phase == musterv1.BroadcastJobCompleted, fmt.Sprintf("%s, %d/%d", got.Status.Phase, got.Status.Succeeded, got.Status.Desired), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if listed := len(got.Status.Clusters) + int(got.Status.ClustersOmitted); got.Status.Desired != want || got.Status.Succeeded != want || listed != members {
			t.Errorf("complete with %d/%d over %d clusters, want %d/%d over %d", got.Status.Succeeded, got.Status.Desired, listed, want, want, members)
		}
		t.Logf("%d of %d nodes fit the pod", want, members*nodesPerMember)
	})
	t.Run("every agent restarted at once goes on with its work and rewrites no slice", func(t *testing.T) {
		fj := fleetsim.DividedJob(metav1.NamespaceDefault, "across-restart", members)
		if err := fleet.Hub.Client.Create(ctx, fj); err != nil {
			t.Fatal(err)
		}
		waitScheduled(t, fj)
		began := time.Now()
		wrote, err := sim.Restart(ctx, run, boot, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d agents restarted in %s", members, time.Since(began).Round(10*time.Millisecond))
		if wrote != 0 {
			t.Errorf("the restarted agents wrote %d NodeSlices, want none: their nodes did not change", wrote)
		}
		if got := waitComplete(t, fj); got.Status.Succeeded != members {
			t.Errorf("complete with %d succeeded, want %d", got.Status.Succeeded, members)
		}
		// The condition's time is the hub's, to the second.
		assertAvailableSince(t, began.Add(-time.Second))
	})
	t.Run("a changed node rewrites its slice alone", func(t *testing.T) {
		m := sim.Members[0]
		// One node of the first slice: the churn's first round changes the first node.
		written, err := m.Churn(ctx, 1.0/nodesPerMember, 1)
		if err != nil || written != 1 {
			t.Fatalf("Churn wrote %d slices (%v), want 1", written, err)
		}
		for i, want := range []string{"1", "0"} {
			var slice musterv1.NodeSlice
			key := client.ObjectKey{Namespace: musterv1.MemberNamespace(m.Name), Name: inventory.SliceName(m.Name, i)}
			if err := fleet.Hub.Client.Get(ctx, key, &slice); err != nil {
				t.Fatal(err)
			}
			if got := nodeshape.Resolve(&slice.Nodes[0], slice.Shapes).Labels[fleetsim.ChurnLabel]; got != want {
				t.Errorf("slice %s's first node has %s=%q, want %q", key.Name, fleetsim.ChurnLabel, got, want)
			}
		}
	})
	t.Run("a member that stops renewing is marked, the others stay Available", func(t *testing.T) {
		victim := sim.Members[members-1]
		victim.StopRenewing()
		var lease coordinationv1.Lease
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: musterv1.MemberNamespace(victim.Name), Name: heartbeat.LeaseName}, &lease); err != nil {
			t.Fatal(err)
		}
		mc, err := framework.WaitForClusterCondition(ctx, fleet.Hub, victim.Name, musterv1.MemberClusterAvailable, metav1.ConditionUnknown, grace+renew+time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		marked := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable).LastTransitionTime.Time
		// The condition's time is the hub's, to the second; the Lease's, the agent's.
		if late := marked.Sub(lease.Spec.RenewTime.Time); late > grace+5*time.Second {
			t.Errorf("%s marked %s after its last renewal, more than the grace period and 5 s", victim.Name, late.Round(time.Second))
		}
		waitAvailable(t, members-1)
	})
}

// waitAvailable waits until exactly n simulated members are Available.
func waitAvailable(t *testing.T, n int) {
	t.Helper()
	err := framework.Until(t.Context(), 2*time.Minute, fmt.Sprintf("%d members Available", n), func(ctx context.Context) (bool, string, error) {
		var list musterv1.MemberClusterList
		if err := fleet.Hub.Client.List(ctx, &list); err != nil {
			return false, err.Error(), nil
		}
		available := 0
		for _, mc := range list.Items {
			if meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterAvailable) {
				available++
			}
		}
		return available == n, fmt.Sprintf("%d of %d Available", available, len(list.Items)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// assertAvailableSince fails the test for every member not Available, or marked
// Available only after since: one that lost its Available condition in between.
func assertAvailableSince(t *testing.T, since time.Time) {
	t.Helper()
	var list musterv1.MemberClusterList
	if err := fleet.Hub.Client.List(t.Context(), &list); err != nil {
		t.Fatal(err)
	}
	for _, mc := range list.Items {
		c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		if c == nil || c.Status != metav1.ConditionTrue || c.LastTransitionTime.After(since) {
			t.Errorf("%s's Available condition is %+v: it was not Available throughout since %s", mc.Name, c, since.Format(time.RFC3339))
		}
	}
}

// waitScheduled waits until the hub placed fj.
func waitScheduled(t *testing.T, fj *musterv1.FleetJob) {
	t.Helper()
	err := framework.Until(t.Context(), time.Minute, "FleetJob "+fj.Name+" to be placed", func(ctx context.Context) (bool, string, error) {
		var got musterv1.FleetJob
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, err.Error(), nil
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, musterv1.FleetJobScheduled), string(got.Status.Phase), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitComplete(t *testing.T, fj *musterv1.FleetJob) *musterv1.FleetJob {
	t.Helper()
	var got musterv1.FleetJob
	err := framework.Until(t.Context(), 2*time.Minute, "FleetJob "+fj.Name+" to complete", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fj), &got); err != nil {
			return false, err.Error(), nil
		}
		return got.Status.Phase == musterv1.JobComplete, fmt.Sprintf("%s, %d shards", got.Status.Phase, len(got.Status.Clusters)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return &got
}

// heartbeatLevel is the API Priority and Fairness level the hub's chart gives agents'
// Lease requests.
const heartbeatLevel = "muster-agent-heartbeats"

// priorityLevels records, by method and resource, the priority level the API server says
// (in its X-Kubernetes-PF-PriorityLevel-UID header) it ran each request at.
type priorityLevels struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]types.UID
}

func (p *priorityLevels) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	parts := strings.Split(strings.TrimSuffix(req.URL.Path, "/"), "/")
	resource := ""
	if len(parts) >= 2 {
		resource = parts[len(parts)-2]
	}
	p.mu.Lock()
	p.seen[req.Method+" "+resource] = types.UID(resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID))
	p.mu.Unlock()
	return resp, nil
}
