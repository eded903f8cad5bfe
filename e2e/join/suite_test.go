//go:build e2e

// Package join proves that clusters join the hub with the real musterctl and agent, that
// an agent's identity reaches only its own cluster's objects, that the hub notices agents
// that stop, that agents rotate their certificates, and that the hub's inventory follows
// the members' nodes.
package join

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/hub"
)

const (
	nodesPerMember = 3
	// gracePeriod and heartbeat are the defaults (40s, 10s) halved: four missed renewals
	// still make a cluster unreachable, and a stopped agent's cluster turns Unknown 20s
	// sooner.
	gracePeriod = 20 * time.Second
	heartbeat   = "5s"
	// certLifetime is what the hub's signer issues: short, so agents rotate during the suite.
	certLifetime = time.Minute
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
	hubs   *hub.Controllers
	// joinStarted is when the joins began; availability is measured from it.
	joinStarted time.Time
	// member1AvailableSince is when member1 first became Available, to show that rotations
	// never cost it its lease.
	member1AvailableSince metav1.Time
)

// agentArgs are every agent's flags in this suite.
var agentArgs = []string{"--cert-lifetime", "10m", "--heartbeat-interval", heartbeat}

// joined are the members that join and get accepted; member3 stays out for the
// bad-input cases.
var joined = []string{"member1", "member2"}

func TestMain(m *testing.M) {
	// The in-process hub logs only errors, to keep test output readable.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "muster-e2e-join-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	fleet, err = framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: 3, NodesPerMember: nodesPerMember, HubSigningDuration: certLifetime})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bringing the fleet up:", err)
		return 1
	}
	defer func() {
		if muster != nil {
			muster.Stop()
		}
		if err := fleet.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		}
	}()
	if err := setUp(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "installing Muster:", err)
		dumpLogs()
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpLogs()
	}
	return code
}

// setUp installs the hub, runs its controllers in this process, and joins member1 and
// member2 with the real musterctl and agent binaries.
func setUp(ctx context.Context) error {
	var err error
	muster, err = framework.InstallHub(ctx, fleet)
	if err != nil {
		return err
	}
	opts := hub.NewOptions()
	opts.ClusterGracePeriod = gracePeriod
	hubs, err = framework.StartHubInProcess(ctx, fleet, opts)
	if err != nil {
		return err
	}
	joinStarted = time.Now()
	for _, name := range joined {
		member := memberNamed(name)
		if _, err := muster.Join(ctx, member, name); err != nil {
			return err
		}
		if err := muster.StartAgent(member, agentArgs...); err != nil {
			return err
		}
	}
	for _, name := range joined {
		if _, err := muster.Musterctl(ctx, fleet.Hub, "accept", name); err != nil {
			return err
		}
	}
	// Every test may use both members: wait for both (accept returns once the request is
	// approved, before the agent has its certificate and reports its nodes).
	for _, name := range joined {
		mc, err := framework.WaitForClusterCondition(ctx, fleet.Hub, name, musterv1.MemberClusterAvailable, metav1.ConditionTrue, time.Minute)
		if err != nil {
			return err
		}
		for _, c := range mc.Status.Conditions {
			if c.Type == musterv1.MemberClusterAvailable && name == "member1" {
				member1AvailableSince = c.LastTransitionTime
			}
		}
	}
	// Available says the agent renews its Lease; its NodeSlices reach the hub's inventory
	// moments later. The tests compare inventories, so they start once both are complete.
	for _, name := range joined {
		err := framework.Until(ctx, 30*time.Second, name+"'s nodes in the hub inventory", func(context.Context) (bool, string, error) {
			n := len(hubs.Inventory.Nodes(name))
			return n == nodesPerMember, fmt.Sprintf("%d nodes", n), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func memberNamed(name string) *framework.Cluster {
	for _, m := range fleet.Members {
		if m.Name == name {
			return m
		}
	}
	panic("no member " + name)
}

func dumpLogs() {
	for name, p := range muster.Agents {
		if raw, err := os.ReadFile(p.Log); err == nil {
			fmt.Fprintf(os.Stderr, "----- agent %s log (last 4000 bytes) -----\n%s\n", name, tailBytes(raw, 4000))
		}
	}
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
