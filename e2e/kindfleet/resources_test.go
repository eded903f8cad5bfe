//go:build e2ekind

package kindfleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// usage is a container's resource use as its kubelet reports it.
type usage struct {
	workingSet float64 // bytes
	cpuSeconds float64 // cumulative
}

// containerUsage reads the kubelet's resource metrics of node (through the API server's
// node proxy) for the containers of pods in namespace.
func containerUsage(ctx context.Context, c *framework.Cluster, node, namespace string) (map[string]usage, error) {
	raw, err := c.Clientset.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy/metrics/resource").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: kubelet resource metrics of %s: %w", c.Name, node, err)
	}
	out := map[string]usage{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		var metric string
		switch {
		case strings.HasPrefix(line, "container_memory_working_set_bytes{"):
			metric = "memory"
		case strings.HasPrefix(line, "container_cpu_usage_seconds_total{"):
			metric = "cpu"
		default:
			continue
		}
		if !strings.Contains(line, `namespace="`+namespace+`"`) {
			continue
		}
		pod := label(line, "pod")
		fields := strings.Fields(line[strings.LastIndex(line, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("parsing %q: %w", line, err)
		}
		u := out[pod]
		if metric == "memory" {
			u.workingSet = v
		} else {
			u.cpuSeconds = v
		}
		out[pod] = u
	}
	return out, sc.Err()
}

func label(line, name string) string {
	_, rest, ok := strings.Cut(line, name+`="`)
	if !ok {
		return ""
	}
	value, _, _ := strings.Cut(rest, `"`)
	return value
}

// TestHubAndAgentResourceUse measures the hub and agent pods over two windows, the fleet
// idle and then busy with a FleetJob of 24 one-second pods over both members, and prints
// the figures the README and the Deployments' requests are sized from. It fails if the
// kubelets report nothing for them or if one exceeds its memory budget.
func TestHubAndAgentResourceUse(t *testing.T) {
	muster(t)
	// The kubelet's CPU counters move in steps of about 10 s: a shorter window reads 0.
	const window = 20 * time.Second
	measure(t, "idle", window)

	createOnHub(t, dividedJob("busy", 24, 6, "sleep", "1s"))
	measure(t, "busy", window)
}

// measure samples the hub's pods and member1's agent over window and prints their working
// set and CPU.
func measure(t *testing.T, phase string, window time.Duration) {
	t.Helper()
	ctx := t.Context()
	targets := []struct {
		cluster   *framework.Cluster
		namespace string
		budget    float64 // bytes of working set
	}{
		{fleet.Hub, "muster-system", 256 << 20},
		{fleet.Members[0], musterv1.AgentNamespace, 128 << 20},
	}
	before := make([]map[string]usage, len(targets))
	nodes := make([]string, len(targets))
	for i, tg := range targets {
		list, err := tg.cluster.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			t.Fatalf("%s: nodes: %v", tg.cluster.Name, err)
		}
		nodes[i] = list.Items[0].Name
		if before[i], err = containerUsage(ctx, tg.cluster, nodes[i], tg.namespace); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(window)
	for i, tg := range targets {
		after, err := containerUsage(ctx, tg.cluster, nodes[i], tg.namespace)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) == 0 {
			t.Errorf("%s: the kubelet reports no container in %s", tg.cluster.Name, tg.namespace)
		}
		for pod, u := range after {
			cpu := (u.cpuSeconds - before[i][pod].cpuSeconds) / window.Seconds()
			fmt.Printf("kindfleet: %s %s/%s: working set %.1f MiB, CPU %.1f millicores over %s\n", phase, tg.cluster.Name, pod, u.workingSet/(1<<20), cpu*1000, window)
			if u.workingSet > tg.budget {
				t.Errorf("%s: %s/%s uses %.0f MiB, over its %.0f MiB budget", phase, tg.cluster.Name, pod, u.workingSet/(1<<20), tg.budget/(1<<20))
			}
		}
	}
}
