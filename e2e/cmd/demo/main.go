// Command demo brings up a local Muster fleet the way a user would build one: a hub
// cluster with `musterctl init`, member clusters joined with `musterctl join` and
// `musterctl accept`, the hub and agents running as processes, and two sample jobs placed
// by the hub across every member: a divided Indexed FleetJob and a BroadcastJob. `make fleet-down` stops it all.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

func main() {
	dir := flag.String("dir", "_output/fleet", "directory of the fleet's kubeconfigs, logs and state")
	members := flag.Int("members", 2, "number of member clusters")
	nodes := flag.Int("nodes", 3, "fake nodes per member cluster")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *dir, *members, *nodes); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		fmt.Fprintf(os.Stderr, "logs are in %s\n", filepath.Join(*dir, "logs"))
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, members, nodes int) error {
	start := time.Now()
	if err := framework.Down(ctx, dir); err != nil {
		return fmt.Errorf("removing the previous demo fleet: %w", err)
	}
	step("bringing up a hub and %d member clusters with %d nodes each", members, nodes)
	f, err := framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: members, NodesPerMember: nodes})
	if err != nil {
		return err
	}
	step("musterctl init --no-deploy (hub) and starting muster-hub")
	m, err := framework.InstallHub(ctx, f)
	if err != nil {
		return err
	}
	hubArgs, err := framework.HubProcessArgs(f.Hub)
	if err != nil {
		return err
	}
	if _, err := framework.StartDetached(f.Dir, "muster-hub", m.Bin.Hub, hubArgs...); err != nil {
		return err
	}
	for _, member := range f.Members {
		step("musterctl join --cluster-name %s and starting its muster-agent", member.Name)
		if _, err := m.Join(ctx, member, member.Name); err != nil {
			return err
		}
		if _, err := framework.StartDetached(f.Dir, "muster-agent-"+member.Name, m.Bin.Agent, "--kubeconfig", member.Kubeconfig, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"); err != nil {
			return err
		}
	}
	for _, member := range f.Members {
		step("musterctl accept %s", member.Name)
		if _, err := m.Musterctl(ctx, f.Hub, "accept", member.Name); err != nil {
			return err
		}
	}
	for _, member := range f.Members {
		// Joined is set with the first inventory report, Available with the first heartbeat.
		for _, cond := range []string{musterv1.MemberClusterJoined, musterv1.MemberClusterAvailable} {
			if _, err := framework.WaitForClusterCondition(ctx, f.Hub, member.Name, cond, metav1.ConditionTrue, time.Minute); err != nil {
				return err
			}
		}
	}
	out, err := m.Musterctl(ctx, f.Hub, "get", "clusters")
	if err != nil {
		return err
	}
	step("musterctl get clusters\n\n%s", out)
	if err := runSampleFleetJob(ctx, m, f); err != nil {
		return err
	}
	if err := runSampleBroadcastJob(ctx, m, f); err != nil {
		return err
	}
	fmt.Printf(`
Muster's demo fleet is up (%s). Try (the README's quick start has more):

  export KUBECONFIG=%s
  export PATH=%s:$PATH
  musterctl get clusters
  musterctl describe fleetjob render-frames
  musterctl get broadcastjob prefetch-image
  musterctl dashboard    # the fleet live in a browser: http://127.0.0.1:8420/
  kubectl get memberclusters,fleetjobs,broadcastjobs,works -A

Logs: %s    Stop everything: make fleet-down
`, time.Since(start).Round(time.Second), f.Hub.Kubeconfig, filepath.Dir(m.Bin.Musterctl), filepath.Join(f.Dir, "logs"))
	return nil
}

// runSampleFleetJob creates deploy/samples/fleetjob.yaml on the hub as it is (divided over
// member1 and member2) and waits until every one of its indexes succeeded.
func runSampleFleetJob(ctx context.Context, m *framework.Muster, f *framework.Fleet) error {
	fj := &musterv1.FleetJob{}
	if err := readSample("fleetjob.yaml", fj); err != nil {
		return err
	}
	step("a FleetJob on the hub: %d indexed completions divided over %v", *fj.Spec.Template.Spec.Completions, fj.Spec.Placement.ClusterNames)
	if err := f.Hub.Client.Create(ctx, fj); err != nil {
		return fmt.Errorf("creating the sample FleetJob: %w", err)
	}
	err := framework.Until(ctx, 2*time.Minute, "the sample FleetJob to complete", func(ctx context.Context) (bool, string, error) {
		if err := f.Hub.Client.Get(ctx, types.NamespacedName{Namespace: fj.Namespace, Name: fj.Name}, fj); err != nil {
			return false, err.Error(), nil
		}
		if fj.Status.Phase == musterv1.JobFailed {
			return false, "", fmt.Errorf("the sample FleetJob failed: %+v", fj.Status.Conditions)
		}
		return fj.Status.Phase == musterv1.JobComplete, string(fj.Status.Phase), nil
	})
	if err != nil {
		return err
	}
	out, err := m.Musterctl(ctx, f.Hub, "describe", "fleetjob", fj.Name, "-n", fj.Namespace)
	if err != nil {
		return err
	}
	step("musterctl describe fleetjob %s\n\n%s", fj.Name, out)
	return nil
}

// readSample decodes deploy/samples/<name> into obj.
func readSample(name string, obj any) error {
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "samples", name))
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		return fmt.Errorf("reading the sample %s: %w", name, err)
	}
	return nil
}

// runSampleBroadcastJob creates deploy/samples/broadcastjob.yaml on the hub as it is
// (member1 and member2) and waits until it ran a pod on every node of both.
func runSampleBroadcastJob(ctx context.Context, m *framework.Muster, f *framework.Fleet) error {
	job := &musterv1.BroadcastJob{}
	if err := readSample("broadcastjob.yaml", job); err != nil {
		return err
	}
	step("a BroadcastJob on the hub: one pod on every node of %v", job.Spec.Placement.ClusterNames)
	if err := f.Hub.Client.Create(ctx, job); err != nil {
		return fmt.Errorf("creating the sample BroadcastJob: %w", err)
	}
	err := framework.Until(ctx, 2*time.Minute, "the sample BroadcastJob to complete", func(ctx context.Context) (bool, string, error) {
		if err := f.Hub.Client.Get(ctx, types.NamespacedName{Namespace: job.Namespace, Name: job.Name}, job); err != nil {
			return false, err.Error(), nil
		}
		if job.Status.Phase == musterv1.BroadcastJobFailedPh {
			return false, "", fmt.Errorf("the sample BroadcastJob failed: %+v", job.Status.Conditions)
		}
		return job.Status.Phase == musterv1.BroadcastJobCompleted, string(job.Status.Phase), nil
	})
	if err != nil {
		return err
	}
	out, err := m.Musterctl(ctx, f.Hub, "describe", "broadcastjob", job.Name, "-n", job.Namespace)
	if err != nil {
		return err
	}
	step("musterctl describe broadcastjob %s\n\n%s", job.Name, out)
	return nil
}

func step(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}
