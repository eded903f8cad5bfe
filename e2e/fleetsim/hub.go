package fleetsim

import (
	"context"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/musterhq/muster/agent/registration"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
)

// Discover checks the hub as `musterctl join` does, from the join line `musterctl init`
// printed (its --hub-apiserver, --hub-token and --hub-ca-hash), and returns what a
// simulated member's bootstrap Secret holds.
func Discover(ctx context.Context, joinArgs []string) (registration.Bootstrap, error) {
	arg := func(name string) string { return bootstrap.JoinFlag(joinArgs, name) }
	token, err := bootstrap.ParseToken(arg("--hub-token"))
	if err != nil {
		return registration.Bootstrap{}, err
	}
	hub, err := bootstrap.Discover(ctx, arg("--hub-apiserver"), token, arg("--hub-ca-hash"), 30*time.Second)
	if err != nil {
		return registration.Bootstrap{}, err
	}
	return registration.Bootstrap{HubURL: hub.URL, CA: hub.CA, Token: token.String()}, nil
}

// BroadcastJob is a BroadcastJob over every node of every member that fits its pod,
// which the restricted Pod Security level allows: what the harness broadcasts.
func BroadcastJob(namespace, name string) *musterv1.BroadcastJob {
	return &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: musterv1.BroadcastJobSpec{
			Placement: &musterv1.Placement{},
			Template:  corev1.PodTemplateSpec{Spec: restrictedPod()},
		},
	}
}

// DividedJob is a Divided Indexed FleetJob of one completion per member over every
// member, its pods as the restricted Pod Security level allows: what the harness places.
func DividedJob(namespace, name string, members int) *musterv1.FleetJob {
	n := int32(members)
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Completions: ptr.To(n), Parallelism: ptr.To(n), CompletionMode: ptr.To(batchv1.IndexedCompletion),
				Template: corev1.PodTemplateSpec{Spec: restrictedPod()},
			}},
		},
	}
}

// restrictedPod is a pod the restricted Pod Security level allows, asking for a tenth of
// a CPU.
func restrictedPod() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name: "work", Image: "registry.k8s.io/e2e-test-images/agnhost:2.53", Args: []string{"pause"},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}
