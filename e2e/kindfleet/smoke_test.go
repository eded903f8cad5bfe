//go:build e2ekind

package kindfleet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

func TestEveryNodeIsReady(t *testing.T) {
	for _, c := range fleet.Clusters() {
		nodes, err := c.Clientset.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if len(nodes.Items) != 1 {
			t.Errorf("%s has %d nodes, want 1", c.Name, len(nodes.Items))
		}
		for _, n := range nodes.Items {
			if !nodeReady(n) {
				t.Errorf("%s: node %s is not Ready: %v", c.Name, n.Name, n.Status.Conditions)
			}
			if got := n.Status.NodeInfo.KubeletVersion; got != toolchain.KubernetesVersion {
				t.Errorf("%s: node %s runs kubelet %s, want %s", c.Name, n.Name, got, toolchain.KubernetesVersion)
			}
		}
	}
}

func TestARealContainerRunsToCompletionInEveryCluster(t *testing.T) {
	for _, c := range fleet.Clusters() {
		t.Run(c.Name, func(t *testing.T) {
			log := runPod(t, c, "sleep", "sleep", "1s")
			if !strings.Contains(log, "slept 1s") {
				t.Errorf("the pod's log is %q, want it to say it slept", log)
			}
		})
	}
}

func TestAPodReachesAnotherClustersAPIServer(t *testing.T) {
	member1, member2 := fleet.Members[0], fleet.Members[1]
	byAddress, err := fleet.Provider.(*kind.Provider).InternalAPIServer(member2.Name)
	if err != nil {
		t.Fatal(err)
	}
	// The name is how kind's internal kubeconfig names it: resolved by CoreDNS through
	// Docker's DNS on the kind network.
	byName := "https://" + kind.NamePrefix + member2.Name + "-control-plane:6443"
	for i, url := range []string{byAddress, byName} {
		log := runPod(t, member1, fmt.Sprintf("reach-member2-%d", i), "get", url+"/version")
		// /version is public: an answer with member2's version proves the path, not a login.
		if !strings.Contains(log, "200 OK") || !strings.Contains(log, `"gitVersion": "`+toolchain.KubernetesVersion+`"`) {
			t.Errorf("GET %s/version from a pod in %s answered %q, want 200 OK with member2's version", url, member1.Name, log)
		}
	}
}

// runPod runs the workload image with args in a pod of c until it succeeds, and returns
// its log.
func runPod(t *testing.T, c *framework.Cluster, name string, args ...string) string {
	t.Helper()
	ctx := t.Context()
	pods := c.Clientset.CoreV1().Pods("default")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "workload", Image: workload, Args: args,
				// The image was loaded into the node; there is no registry to pull from.
				ImagePullPolicy: corev1.PullNever,
			}},
		},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("%s: creating pod %s: %v", c.Name, name, err)
	}
	t.Cleanup(func() { _ = pods.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	err := framework.Until(ctx, 2*time.Minute, "pod "+name+" in "+c.Name+" to succeed", func(ctx context.Context) (bool, string, error) {
		got, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if got.Status.Phase == corev1.PodFailed {
			return false, "", fmt.Errorf("pod failed: %v", got.Status.ContainerStatuses)
		}
		return got.Status.Phase == corev1.PodSucceeded, fmt.Sprintf("phase %s %v", got.Status.Phase, got.Status.ContainerStatuses), nil
	})
	raw, logErr := pods.GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("%v; log: %s %v", err, raw, logErr)
	}
	if logErr != nil {
		t.Fatalf("%s: reading pod %s's log: %v", c.Name, name, logErr)
	}
	return string(raw)
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
