//go:build e2e || badinputprobe

package badinput

import (
	"encoding/json"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Names every case shares: the hub namespace the objects go to, the two members, and the
// node pool the suite's pods run on.
const (
	ns = "badinput"
	// sliceNamespace holds the cases' NodeSlices: ghost's hub namespace.
	sliceNamespace = "muster-member-ghost"
	member1Name    = "member1"
	member2Name    = "member2"
	poolLabel      = "e2e.muster.dev/pool"
	workPool       = "work"
)

// podSpec is a pod that kwok runs and finishes one second later, on the work pool.
func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		NodeSelector:  map[string]string{poolLabel: workPool},
		Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
	}
}

// fleetJob is a valid one-pod FleetJob placed whole on one of the two members.
func fleetJob(name string, mutate ...func(*musterv1.FleetJob)) *musterv1.FleetJob {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementSingle, Placement: musterv1.Placement{
				ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1Name, member2Name}},
			}},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Parallelism: ptr.To[int32](1),
				Completions: ptr.To[int32](1),
				Template:    corev1.PodTemplateSpec{Spec: podSpec()},
			}},
		},
	}
	for _, m := range mutate {
		m(fj)
	}
	return fj
}

// jobPod is the pod spec of a FleetJob's shards.
func jobPod(fj *musterv1.FleetJob) *corev1.PodSpec { return &fj.Spec.Template.Spec.Template.Spec }

func indexed(completions int32) func(*musterv1.FleetJob) {
	return func(fj *musterv1.FleetJob) {
		fj.Spec.Template.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		fj.Spec.Template.Spec.Completions = ptr.To(completions)
	}
}

// broadcastJob is a valid hub BroadcastJob over both members' work pools.
func broadcastJob(name string, mutate ...func(*musterv1.BroadcastJob)) *musterv1.BroadcastJob {
	j := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.BroadcastJobSpec{
			Placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1Name, member2Name}}},
			Template:  corev1.PodTemplateSpec{Spec: podSpec()},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return j
}

// cronJob is a valid FleetCronJob that fires daily at 03:00 with a FleetJob child.
func cronJob(name string, mutate ...func(*musterv1.FleetCronJob)) *musterv1.FleetCronJob {
	child := fleetJob("child")
	cj := &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetCronJobSpec{
			Schedule:    "0 3 * * *",
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: child.Spec},
		},
	}
	for _, m := range mutate {
		m(cj)
	}
	return cj
}

// broadcastChildren swaps a FleetCronJob's FleetJob child for a BroadcastJob child.
func broadcastChildren(cj *musterv1.FleetCronJob) {
	cj.Spec.JobTemplate = nil
	cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: broadcastJob("child").Spec}
}

// spread is a valid WorkloadSpread with one unbounded subset on member1.
func spread(name string, mutate ...func(*musterv1.WorkloadSpread)) *musterv1.WorkloadSpread {
	ws := &musterv1.WorkloadSpread{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.WorkloadSpreadSpec{
			TargetReference: musterv1.TargetReference{APIVersion: "muster.dev/v1alpha1", Kind: "FleetJob", Name: "target-" + name},
			Subsets:         []musterv1.WorkloadSpreadSubset{subset("a")},
		},
	}
	for _, m := range mutate {
		m(ws)
	}
	return ws
}

func subset(name string) musterv1.WorkloadSpreadSubset {
	return musterv1.WorkloadSpreadSubset{Name: name, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{member1Name}}}
}

// preferred is a preferred node term of the given weight.
func preferred(weight int32) []corev1.PreferredSchedulingTerm {
	return []corev1.PreferredSchedulingTerm{{Weight: weight, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: poolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{workPool}}},
	}}}
}

func patch(raw string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(raw)} }

// memberCluster is a MemberCluster that never joins.
func memberCluster(name string, mutate ...func(*musterv1.MemberCluster)) *musterv1.MemberCluster {
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, m := range mutate {
		m(mc)
	}
	return mc
}

func taints(ts ...corev1.Taint) func(*musterv1.MemberCluster) {
	return func(mc *musterv1.MemberCluster) { mc.Spec.Taints = ts }
}

// work is a Work in namespace carrying the manifests, given as JSON.
func work(name, namespace string, manifests ...string) *musterv1.Work {
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	for _, m := range manifests {
		w.Spec.Manifests = append(w.Spec.Manifests, musterv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(m)}})
	}
	return w
}

// configMap is a ConfigMap manifest in the default namespace with one data entry.
func configMap(name, key, value string) string {
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"data":     map[string]string{key: value},
	})
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// withFeedback adds a JSONPaths feedback rule for the ConfigMap name.
func withFeedback(w *musterv1.Work, name string, mode musterv1.FeedbackMode, paths ...string) *musterv1.Work {
	rule := musterv1.FeedbackRule{Resource: musterv1.ResourceIdentifier{Version: "v1", Kind: "ConfigMap", Namespace: "default", Name: name}, Mode: mode}
	for i, p := range paths {
		rule.JSONPaths = append(rule.JSONPaths, musterv1.JSONPathRule{Name: fmt.Sprintf("v%d", i), Path: p})
	}
	w.Spec.FeedbackRules = append(w.Spec.FeedbackRules, rule)
	return w
}

// nodeSlice is a NodeSlice with clusterName cluster and n ready nodes, in the hub
// namespace of ghost, a cluster that never joins: a slice must name the cluster of its
// namespace, and ghost's nodes never weigh in any other test's placement.
func nodeSlice(name, cluster string, n int) *musterv1.NodeSlice {
	s := &musterv1.NodeSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sliceNamespace}, ClusterName: cluster}
	for i := range n {
		s.Nodes = append(s.Nodes, musterv1.NodeInfo{Name: fmt.Sprintf("node-%d", i), Ready: true, Labels: map[string]string{poolLabel: workPool}})
	}
	return s
}

func repeat(s string, n int) string { return strings.Repeat(s, n) }

// emptyTemplate is obj as a user writes it with `template: {}`: the typed object cannot
// say that (its template's spec is never absent), so it goes as unstructured.
func emptyTemplate(obj client.Object) client.Object {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil {
		panic(err)
	}
	u.SetGroupVersionKind(gvks[0])
	if err := unstructured.SetNestedMap(u.Object, map[string]any{}, "spec", "template"); err != nil {
		panic(err)
	}
	return u
}
