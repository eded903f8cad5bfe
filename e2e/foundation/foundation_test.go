//go:build e2e

// Package foundation proves the test fleet itself: a hub and two members come up with
// Ready nodes, each member runs a plain batch/v1 Job to completion with its own
// kube-controller-manager, pods finish with the outcome and exit code they ask for, and
// tearing the fleet down leaves no process behind.
package foundation

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

const (
	members        = 2
	nodesPerMember = 3
	jobTimeout     = time.Minute
)

var fleet *framework.Fleet

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "muster-e2e-foundation-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)

	start := time.Now()
	fleet, err = framework.Up(ctx, framework.FleetOptions{Dir: dir, Members: members, NodesPerMember: nodesPerMember})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bringing the fleet up:", err)
		return 1
	}
	fmt.Printf("fleet of a hub and %d members with %d nodes each up in %s\n", members, nodesPerMember, time.Since(start).Round(100*time.Millisecond))

	code := m.Run()
	if err := tearDown(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "tearing the fleet down:", err)
		return 1
	}
	return code
}

// tearDown deletes the fleet and, for the local provider, checks that every process the
// clusters ran has exited.
func tearDown(ctx context.Context) error {
	var pids []int
	lp, isLocal := fleet.Provider.(*local.Provider)
	if isLocal {
		for _, c := range fleet.Clusters() {
			pids = append(pids, lp.ClusterPIDs(c.Name)...)
		}
		if len(pids) < 5*len(fleet.Clusters()) {
			return fmt.Errorf("found %d cluster processes before teardown, want 5 per cluster", len(pids))
		}
	}
	if err := fleet.Down(ctx); err != nil {
		return err
	}
	if left := local.ProcessesAlive(pids); len(left) > 0 {
		return fmt.Errorf("processes %v still run after teardown", left)
	}
	return nil
}

func TestEveryMemberHasReadyNodes(t *testing.T) {
	if len(fleet.Members) != members {
		t.Fatalf("fleet has %d members, want %d", len(fleet.Members), members)
	}
	for _, m := range fleet.Members {
		ready, err := framework.ReadyNodes(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if ready != nodesPerMember {
			t.Errorf("member %s has %d ready nodes, want %d", m.Name, ready, nodesPerMember)
		}
	}
}

func TestPlainJobCompletesOnEveryMember(t *testing.T) {
	for _, m := range fleet.Members {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			ns, err := framework.CreateNamespace(ctx, m, "plain-job")
			if err != nil {
				t.Fatal(err)
			}
			completions := int32(3)
			job := &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
				Spec: batchv1.JobSpec{
					Completions: &completions,
					Parallelism: &completions,
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "hello", Image: "busybox", Command: []string{"true"}}},
					}},
				},
			}
			if err := m.Client.Create(ctx, job); err != nil {
				t.Fatal(err)
			}
			done, err := framework.WaitForJobCondition(ctx, m, types.NamespacedName{Namespace: ns, Name: "hello"}, batchv1.JobComplete, jobTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if done.Status.Succeeded != completions || done.Status.Failed != 0 {
				t.Errorf("job finished with succeeded=%d failed=%d, want %d and 0", done.Status.Succeeded, done.Status.Failed, completions)
			}
		})
	}
}

func TestPodFinishesWithTheOutcomeItAsksFor(t *testing.T) {
	cases := []struct {
		outcome  corev1.PodPhase
		exitCode string
		want     int32
	}{
		{outcome: corev1.PodFailed, exitCode: "42", want: 42},
		{outcome: corev1.PodSucceeded, want: 0},
	}
	m := fleet.Members[0]
	for _, tc := range cases {
		t.Run(string(tc.outcome), func(t *testing.T) {
			ctx := t.Context()
			ns, err := framework.CreateNamespace(ctx, m, "outcome")
			if err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name:        "p",
					Namespace:   ns,
					Labels:      map[string]string{"e2e.muster.dev/outcome": string(tc.outcome)},
					Annotations: map[string]string{"e2e.muster.dev/delay": "2s"},
				},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					// On kind the container really runs; on kwok the labels decide.
					Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", "sleep 2; exit " + tc.exitCode}}},
				},
			}
			if tc.exitCode != "" {
				pod.Annotations["e2e.muster.dev/exit-code"] = tc.exitCode
			} else {
				pod.Spec.Containers[0].Command = []string{"sh", "-c", "sleep 2"}
			}
			created := time.Now()
			if err := m.Client.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			got, err := framework.WaitForPodPhase(ctx, m, types.NamespacedName{Namespace: ns, Name: "p"}, tc.outcome, jobTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if elapsed := time.Since(created); elapsed < 2*time.Second {
				t.Errorf("pod finished after %s, before its 2s delay", elapsed)
			}
			if len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].State.Terminated == nil {
				t.Fatalf("pod has no terminated container status: %+v", got.Status.ContainerStatuses)
			}
			if code := got.Status.ContainerStatuses[0].State.Terminated.ExitCode; code != tc.want {
				t.Errorf("container exit code = %d, want %d", code, tc.want)
			}
		})
	}
}
