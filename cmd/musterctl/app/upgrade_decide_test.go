package app

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestRolledOut(t *testing.T) {
	d := func(generation, observed int64, replicas, updated, available, all int32) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.DeploymentStatus{
				ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: available, Replicas: all,
			},
		}
	}
	for _, c := range []struct {
		name string
		d    *appsv1.Deployment
		done bool
	}{
		{"the controller has not seen the new template", d(3, 2, 2, 2, 2, 2), false},
		{"one new pod up, both old still there", d(3, 3, 2, 1, 2, 3), false},
		{"both new, one not available yet", d(3, 3, 2, 2, 1, 2), false},
		{"both new, an old one still terminating", d(3, 3, 2, 2, 2, 3), false},
		{"every pod new and available", d(3, 3, 2, 2, 2, 2), true},
		{"a one-replica agent recreated", d(2, 2, 1, 1, 1, 1), true},
	} {
		if done, state := rolledOut(c.d); done != c.done {
			t.Errorf("%s: rolled out %v (%s), want %v", c.name, done, state, c.done)
		}
	}
}

func TestExtraHubArgsKeepsWhatInitAdded(t *testing.T) {
	d := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "hub", Args: []string{"--leader-elect=true", "--webhook-cert-validity=2m", "--reserved-namespaces=prod"}},
		{Name: "proxy", Args: []string{"--upstream=127.0.0.1:8080"}},
	}}}}}
	if got, want := extraHubArgs(d), []string{"--webhook-cert-validity=2m", "--reserved-namespaces=prod"}; !slices.Equal(got, want) {
		t.Errorf("extra args %q, want %q", got, want)
	}
}
