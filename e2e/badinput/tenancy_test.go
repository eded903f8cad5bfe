//go:build e2e

package badinput

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Hub namespaces a hub admin labelled with a Pod Security level.
const (
	restrictedNS = "badinput-restricted"
	privilegedNS = "badinput-privileged"
)

// reservedMessage is the start of the refusal of an object in a reserved namespace.
func reservedMessage(ns string) string { return "Forbidden: namespace " + ns + " is reserved" }

// rootOnEveryNode makes pods root on their node: privileged, in the node's PID namespace,
// with the node's file system mounted, on every node whatever its taints.
func rootOnEveryNode(s *corev1.PodSpec) {
	s.HostPID = true
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}
	s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// restrictedPod meets the restricted level.
func restrictedPod(s *corev1.PodSpec) {
	s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	s.Containers[0].SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// tenancyCases are what a user allowed only Muster's kinds in one hub namespace tries in
// order to become root on the members or reach the agent: each is refused at admission.
// outcome from hub/webhook (Pod Security and reserved namespaces)
func tenancyCases() []refusedCase {
	return []refusedCase{
		{input: "privileged, hostPID, hostPath / and tolerating every taint", obj: broadcastJob("root", func(j *musterv1.BroadcastJob) {
			rootOnEveryNode(&j.Spec.Template.Spec)
		}), want: refusal{"spec.template.spec", `Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true), hostPath volumes (volume "root"), privileged (container "main" must not set securityContext.privileged=true)`}},
		{input: "hostNetwork", obj: fleetJob("host-net", func(fj *musterv1.FleetJob) { jobPod(fj).HostNetwork = true }),
			want: refusal{fjPod[:len(fjPod)-1], `Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`}},
		{input: "in kube-system", obj: fleetJob("sys", func(fj *musterv1.FleetJob) { fj.Namespace = "kube-system" }),
			want: refusal{"metadata.namespace", reservedMessage("kube-system")}},
		{input: "in muster-agent as the agent's ServiceAccount", obj: fleetJob("agent", func(fj *musterv1.FleetJob) {
			fj.Namespace = musterv1.AgentNamespace
			jobPod(fj).ServiceAccountName = "muster-agent"
		}), want: refusal{"metadata.namespace", reservedMessage(musterv1.AgentNamespace)}},
		{input: "of baseline pods in a namespace labelled restricted", obj: fleetJob("plain", func(fj *musterv1.FleetJob) { fj.Namespace = restrictedNS }),
			want: refusal{fjPod[:len(fjPod)-1], `Forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`}},
	}
}

// TestTenancy is the attack table of a shared fleet: the attacks are refused, and the
// controls, what a hub admin allowed, run on the members, whose namespaces carry the level.
func TestTenancy(t *testing.T) {
	createLabelledNamespaces(t)
	t.Run("refused", func(t *testing.T) {
		for _, tc := range tenancyCases() {
			t.Run(tc.name(), func(t *testing.T) { expectRefused(t, fleet.Hub.Client, tc) })
		}
	})
	t.Run("FleetJob restricted in a namespace labelled restricted -> runs to completion", func(t *testing.T) {
		fj := fleetJob("restricted", func(fj *musterv1.FleetJob) {
			fj.Namespace = restrictedNS
			restrictedPod(jobPod(fj))
		})
		done := runToCompletion(t, fj)
		expectMemberLevel(t, done, restrictedNS, "restricted")
	})
	t.Run("FleetJob privileged with hostPID in a namespace labelled privileged -> runs to completion", func(t *testing.T) {
		fj := fleetJob("privileged", func(fj *musterv1.FleetJob) {
			fj.Namespace = privilegedNS
			jobPod(fj).HostPID = true
			jobPod(fj).Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
		})
		done := runToCompletion(t, fj)
		expectMemberLevel(t, done, privilegedNS, "privileged")
	})
}

// createLabelledNamespaces makes the hub namespaces of the controls, and muster-agent on the
// hub, so that the refusal there is the hub's and not the API server's "not found".
func createLabelledNamespaces(t *testing.T) {
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: restrictedNS, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: privilegedNS, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: musterv1.AgentNamespace}},
	} {
		if err := fleet.Hub.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
}

func runToCompletion(t *testing.T, fj *musterv1.FleetJob) *musterv1.FleetJob {
	t.Helper()
	if err := fleet.Hub.Client.Create(t.Context(), fj); err != nil {
		t.Fatalf("refused: %v", err)
	}
	t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), fj) })
	return waitFleetJobComplete(t, client.ObjectKeyFromObject(fj), 2*time.Minute)
}

// expectMemberLevel checks that the namespace ns on each member that ran fj enforces level,
// as the agent labelled it when it created it.
func expectMemberLevel(t *testing.T, fj *musterv1.FleetJob, ns, level string) {
	t.Helper()
	ran := map[string]bool{}
	for _, c := range fj.Status.Clusters {
		ran[c.ClusterName] = true
	}
	for _, m := range fleet.Members {
		if !ran[m.Name] {
			continue
		}
		var got corev1.Namespace
		if err := m.Client.Get(t.Context(), client.ObjectKey{Name: ns}, &got); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if got.Labels["pod-security.kubernetes.io/enforce"] != level || got.Labels["muster.dev/created-by"] != "muster-agent" {
			t.Errorf("%s: namespace %s has labels %v, want it created by the agent with enforce=%s", m.Name, ns, got.Labels, level)
		}
	}
	if len(ran) == 0 {
		t.Errorf("FleetJob %s reports no cluster: %s", fj.Name, describe(fj.Status.Conditions))
	}
}
