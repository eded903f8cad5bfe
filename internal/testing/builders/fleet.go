package builders

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// MemberClusterBuilder builds a MemberCluster.
type MemberClusterBuilder struct{ mc musterv1.MemberCluster }

// MakeMemberCluster starts a cluster that is neither accepted nor available yet.
func MakeMemberCluster(name string) *MemberClusterBuilder {
	return &MemberClusterBuilder{mc: musterv1.MemberCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid")},
	}}
}

// Obj returns a copy of the MemberCluster built so far.
func (b *MemberClusterBuilder) Obj() *musterv1.MemberCluster { return b.mc.DeepCopy() }

func (b *MemberClusterBuilder) Accepted() *MemberClusterBuilder {
	b.mc.Spec.Accepted = true
	return b
}

func (b *MemberClusterBuilder) Label(key, value string) *MemberClusterBuilder {
	if b.mc.Labels == nil {
		b.mc.Labels = map[string]string{}
	}
	b.mc.Labels[key] = value
	return b
}

func (b *MemberClusterBuilder) Taint(t corev1.Taint) *MemberClusterBuilder {
	b.mc.Spec.Taints = append(b.mc.Spec.Taints, t)
	return b
}

// Condition sets a status condition of the cluster (Accepted, Joined, Available).
func (b *MemberClusterBuilder) Condition(t string, s metav1.ConditionStatus, reason string) *MemberClusterBuilder {
	meta.SetStatusCondition(&b.mc.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, LastTransitionTime: metav1.Now()})
	return b
}

// Available is Accepted, Joined and Available, as a cluster placement may use.
func (b *MemberClusterBuilder) Available() *MemberClusterBuilder {
	return b.Accepted().
		Condition(musterv1.MemberClusterAccepted, metav1.ConditionTrue, "Accepted").
		Condition(musterv1.MemberClusterJoined, metav1.ConditionTrue, "Joined").
		Condition(musterv1.MemberClusterAvailable, metav1.ConditionTrue, "LeaseRenewed")
}

// Nodes sets the node counts and when the agent last reported them.
func (b *MemberClusterBuilder) Nodes(total, ready, schedulable int32, reported time.Time) *MemberClusterBuilder {
	b.mc.Status.Nodes = &musterv1.NodeCounts{Total: total, Ready: ready, Schedulable: schedulable}
	b.mc.Status.LastInventoryReportTime = ptr.To(metav1.NewTime(reported))
	return b
}

// NodeSliceBuilder builds a NodeSlice.
type NodeSliceBuilder struct{ ns musterv1.NodeSlice }

// MakeNodeSlice starts an empty slice of cluster's nodes, in its hub namespace.
func MakeNodeSlice(name, cluster string) *NodeSliceBuilder {
	return &NodeSliceBuilder{ns: musterv1.NodeSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: musterv1.MemberNamespace(cluster)},
		ClusterName: cluster,
	}}
}

// Obj returns a copy of the NodeSlice built so far.
func (b *NodeSliceBuilder) Obj() *musterv1.NodeSlice { return b.ns.DeepCopy() }

// Node adds a ready, schedulable node with cpu and memory allocatable (quantities such as
// "4" and "8Gi"), keeping nodes sorted by name as the agent writes them and nodeCount
// in step.
func (b *NodeSliceBuilder) Node(name, cpu, memory string, mutate ...func(*musterv1.NodeInfo)) *NodeSliceBuilder {
	n := musterv1.NodeInfo{Name: name, Ready: true, Allocatable: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourcePods: resource.MustParse("110"),
	}}
	for _, m := range mutate {
		m(&n)
	}
	i := len(b.ns.Nodes)
	for i > 0 && b.ns.Nodes[i-1].Name > name {
		i--
	}
	b.ns.Nodes = append(b.ns.Nodes[:i], append([]musterv1.NodeInfo{n}, b.ns.Nodes[i:]...)...)
	b.ns.NodeCount = int32(len(b.ns.Nodes))
	return b
}

// WorkBuilder builds a Work.
type WorkBuilder struct{ w musterv1.Work }

// MakeWork starts a Work without manifests in cluster's hub namespace.
func MakeWork(name, cluster string) *WorkBuilder {
	return &WorkBuilder{w: musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: musterv1.MemberNamespace(cluster), UID: types.UID(name + "-uid")},
	}}
}

// Obj returns a copy of the Work built so far.
func (b *WorkBuilder) Obj() *musterv1.Work { return b.w.DeepCopy() }

// Manifest adds obj, marshalled, to the manifests.
func (b *WorkBuilder) Manifest(obj runtime.Object) *WorkBuilder {
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	b.w.Spec.Manifests = append(b.w.Spec.Manifests, musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	return b
}

// ConfigMap adds a ConfigMap manifest with data.
func (b *WorkBuilder) ConfigMap(namespace, name string, data map[string]string) *WorkBuilder {
	return b.Manifest(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Data:       data,
	})
}

func (b *WorkBuilder) DeletePropagation(p musterv1.DeletePropagation) *WorkBuilder {
	b.w.Spec.DeleteOption = &musterv1.DeleteOption{PropagationPolicy: p}
	return b
}

// Feedback adds a feedback rule for the resource.
func (b *WorkBuilder) Feedback(r musterv1.ResourceIdentifier, mode musterv1.FeedbackMode, paths ...musterv1.JSONPathRule) *WorkBuilder {
	b.w.Spec.FeedbackRules = append(b.w.Spec.FeedbackRules, musterv1.FeedbackRule{Resource: r, Mode: mode, JSONPaths: paths})
	return b
}

func (b *WorkBuilder) Label(key, value string) *WorkBuilder {
	if b.w.Labels == nil {
		b.w.Labels = map[string]string{}
	}
	b.w.Labels[key] = value
	return b
}
