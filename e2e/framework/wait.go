package framework

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// poll is the interval of every wait in this package.
const poll = 250 * time.Millisecond

// until polls cond until it returns true, and wraps the last reason it gave into the
// timeout error so a failed wait says what it saw.
func until(ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (bool, string, error)) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, poll, timeout, true, func(ctx context.Context) (bool, error) {
		ok, reason, err := cond(ctx)
		last = reason
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("waiting %s for %s (last seen: %s): %w", timeout, what, last, err)
	}
	return nil
}

// WaitForClusterReady waits until the cluster's API server is ready, the default
// ServiceAccount exists (pods cannot be created before it) and at least readyNodes nodes
// are Ready.
func WaitForClusterReady(ctx context.Context, c *Cluster, readyNodes int, timeout time.Duration) error {
	return until(ctx, timeout, "cluster "+c.Name+" to be ready", func(ctx context.Context) (bool, string, error) {
		if _, err := c.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx); err != nil {
			return false, "readyz: " + err.Error(), nil
		}
		var sa corev1.ServiceAccount
		if err := c.Client.Get(ctx, types.NamespacedName{Namespace: "default", Name: "default"}, &sa); err != nil {
			return false, "default service account: " + err.Error(), nil
		}
		n, err := ReadyNodes(ctx, c)
		if err != nil {
			return false, err.Error(), nil
		}
		return n >= readyNodes, fmt.Sprintf("%d of %d nodes ready", n, readyNodes), nil
	})
}

// ReadyNodes counts the cluster's nodes whose Ready condition is True.
func ReadyNodes(ctx context.Context, c *Cluster) (int, error) {
	var nodes corev1.NodeList
	if err := c.Client.List(ctx, &nodes); err != nil {
		return 0, err
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, nil
}

// WaitForJobCondition waits until a Job has the condition (e.g. Complete) set to True.
func WaitForJobCondition(ctx context.Context, c *Cluster, key types.NamespacedName, cond batchv1.JobConditionType, timeout time.Duration) (*batchv1.Job, error) {
	var job batchv1.Job
	err := until(ctx, timeout, fmt.Sprintf("job %s in %s to be %s", key, c.Name, cond), func(ctx context.Context) (bool, string, error) {
		if err := c.Client.Get(ctx, key, &job); err != nil {
			return false, err.Error(), client404(err)
		}
		for _, jc := range job.Status.Conditions {
			if jc.Type == cond && jc.Status == corev1.ConditionTrue {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("active=%d succeeded=%d failed=%d", job.Status.Active, job.Status.Succeeded, job.Status.Failed), nil
	})
	return &job, err
}

// WaitForPodPhase waits until a pod reaches the phase.
func WaitForPodPhase(ctx context.Context, c *Cluster, key types.NamespacedName, phase corev1.PodPhase, timeout time.Duration) (*corev1.Pod, error) {
	var pod corev1.Pod
	err := until(ctx, timeout, fmt.Sprintf("pod %s in %s to be %s", key, c.Name, phase), func(ctx context.Context) (bool, string, error) {
		if err := c.Client.Get(ctx, key, &pod); err != nil {
			return false, err.Error(), client404(err)
		}
		return pod.Status.Phase == phase, "phase " + string(pod.Status.Phase), nil
	})
	return &pod, err
}

// client404 keeps polling through NotFound (the object may not be there yet) and stops on
// any other error.
func client404(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// CreateNamespace creates a uniquely named namespace for one test.
func CreateNamespace(ctx context.Context, c *Cluster, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Client.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace in %s: %w", c.Name, err)
	}
	return ns.Name, nil
}
