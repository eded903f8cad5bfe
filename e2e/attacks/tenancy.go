// Package attacks is the attack table of a shared fleet (issue 28), written once and run on
// both fleets: the local one (e2e/badinput, e2e/join) and kind (e2e/kindfleet), where the
// members' own Pod Security admission and kubelets are real. Each row is what a user who
// may create Muster objects in one hub namespace, or who holds a leaked join line, tries,
// with the exact refusal they must read; the suites run the controls beside them.
package attacks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Where the pod templates of the attacked kinds sit, as refusals name them.
const (
	FleetJobPod     = "spec.template.spec.template.spec"
	BroadcastJobPod = "spec.template.spec"
)

// EnforceLabel is the Pod Security label a hub admin sets on a hub namespace.
const EnforceLabel = "pod-security.kubernetes.io/enforce"

// Row is one attack refused at admission: the object, and the field and stable part of the
// message the refusal names.
type Row struct {
	Name           string
	Object         client.Object
	Field, Message string
}

// Jobs builds the objects of the rows; each suite passes its own valid templates (its
// images, node pools and placement), which the attacks then change.
type Jobs struct {
	FleetJob     func(name string) *musterv1.FleetJob
	BroadcastJob func(name string) *musterv1.BroadcastJob
}

// RootOnEveryNode makes pods root on their node: privileged, in the node's PID namespace,
// with the node's file system mounted, on every node whatever its taints.
func RootOnEveryNode(s *corev1.PodSpec) {
	s.HostPID = true
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}
	s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// Restricted makes pods meet the restricted level.
func Restricted(s *corev1.PodSpec) {
	s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	s.Containers[0].SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// Privileged makes pods privileged in the node's PID namespace: what a namespace labelled
// privileged allows.
func Privileged(s *corev1.PodSpec) {
	s.HostPID = true
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

// ReservedMessage is the start of the refusal of an object in a reserved namespace.
func ReservedMessage(ns string) string { return "Forbidden: namespace " + ns + " is reserved" }

// Tenancy are the rows by which a namespace user tries to become root on the members or to
// reach the agent; restrictedNS is a hub namespace labelled restricted. Each is refused
// by the hub's Pod Security admission (the library's own messages) or its reserved
// namespaces.
func Tenancy(jobs Jobs, restrictedNS string) []Row {
	root := jobs.BroadcastJob("root")
	RootOnEveryNode(&root.Spec.Template.Spec)
	container := root.Spec.Template.Spec.Containers[0].Name

	hostNet := jobs.FleetJob("host-net")
	hostNet.Spec.Template.Spec.Template.Spec.HostNetwork = true

	system := jobs.FleetJob("sys")
	system.Namespace = "kube-system"

	agent := jobs.FleetJob("agent")
	agent.Namespace = musterv1.AgentNamespace
	agent.Spec.Template.Spec.Template.Spec.ServiceAccountName = "muster-agent"

	plain := jobs.FleetJob("plain")
	plain.Namespace = restrictedNS
	return []Row{
		{Name: "BroadcastJob privileged, hostPID, hostPath / and tolerating every taint", Object: root, Field: BroadcastJobPod,
			Message: `Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true), hostPath volumes (volume "root"), privileged (container "` + container + `" must not set securityContext.privileged=true)`},
		{Name: "FleetJob hostNetwork", Object: hostNet, Field: FleetJobPod,
			Message: `Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`},
		{Name: "FleetJob in kube-system", Object: system, Field: "metadata.namespace", Message: ReservedMessage("kube-system")},
		{Name: "FleetJob in muster-agent as the agent's ServiceAccount", Object: agent, Field: "metadata.namespace", Message: ReservedMessage(musterv1.AgentNamespace)},
		{Name: "FleetJob of baseline pods in a namespace labelled restricted", Object: plain, Field: FleetJobPod,
			Message: `Forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`},
	}
}

// Refused creates the row's object through c and says why that is not the refusal the row
// wants (nil when it is): it must be refused as Invalid on the row's field with its message.
// An object that was admitted is deleted again.
func Refused(ctx context.Context, c client.Client, row Row) error {
	obj := row.Object.DeepCopyObject().(client.Object)
	err := c.Create(ctx, obj)
	if err == nil {
		_ = c.Delete(context.WithoutCancel(ctx), obj)
		return fmt.Errorf("admitted; want it refused on %s with %q", row.Field, row.Message)
	}
	return refusalMismatch(err, row.Field, row.Message)
}

// refusalMismatch says how err differs from an Invalid refusal naming field with message.
func refusalMismatch(err error, field, message string) error {
	msg := err.Error()
	if !apierrors.IsInvalid(err) || !strings.Contains(msg, field+": ") || !strings.Contains(msg, message) {
		return fmt.Errorf("refused with\n  %w\nwant Invalid on %s with %q", err, field, message)
	}
	return nil
}

// ErrNotForbidden is returned by Forbidden for an answer that is not Forbidden.
var ErrNotForbidden = errors.New("want Forbidden")

// Forbidden says why err is not the API server's Forbidden (nil when it is).
func Forbidden(err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case err == nil:
		return fmt.Errorf("allowed: %w", ErrNotForbidden)
	}
	return fmt.Errorf("got %w: %w", err, ErrNotForbidden)
}
