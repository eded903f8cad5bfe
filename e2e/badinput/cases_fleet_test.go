//go:build e2e || badinputprobe

package badinput

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func workloadSpreadCases() []refusedCase {
	first := func(change func(*musterv1.WorkloadSpreadSubset)) func(*musterv1.WorkloadSpread) {
		return func(ws *musterv1.WorkloadSpread) { change(&ws.Spec.Subsets[0]) }
	}
	return []refusedCase{
		// outcome from api/v1alpha1 (the preferred terms' weight rule).
		{input: "preferred term weight 0", obj: spread("weight0", first(func(s *musterv1.WorkloadSpreadSubset) { s.PreferredNodeSelectorTerms = preferred(0) })),
			want: refusal{"spec.subsets[0].preferredNodeSelectorTerms", "weight must be in the range 1-100"}},
		{input: "preferred term weight 101", obj: spread("weight101", first(func(s *musterv1.WorkloadSpreadSubset) { s.PreferredNodeSelectorTerms = preferred(101) })),
			want: refusal{"spec.subsets[0].preferredNodeSelectorTerms", "weight must be in the range 1-100"}},
		{input: "maxReplicas -1", obj: spread("max-neg", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets = []musterv1.WorkloadSpreadSubset{subset("a"), subset("b")}
			ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(-1))
		}), want: refusal{"spec.subsets[0].maxReplicas", "maxReplicas must not be negative"}},
		{input: "subset name Bad_Subset", obj: spread("subset-name", first(func(s *musterv1.WorkloadSpreadSubset) { s.Name = "Bad_Subset" })),
			want: refusal{"spec.subsets[0].name", "should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"}},
		{input: "17 subsets", obj: spread("many", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets = nil
			for i := range 17 {
				s := subset(fmt.Sprintf("s%d", i))
				s.MaxReplicas = ptr.To(intstr.FromInt32(1))
				ws.Spec.Subsets = append(ws.Spec.Subsets, s)
			}
		}), want: refusal{"spec.subsets", "Too many: 17: must have at most 16 items"}},
		{input: "two subsets named a", obj: spread("dup-subset", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets = []musterv1.WorkloadSpreadSubset{subset("a"), subset("a")}
			ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(1))
		}), want: refusal{"spec.subsets[1]", "Duplicate value"}},
		{input: "target kind Deployment", obj: spread("deploy", func(ws *musterv1.WorkloadSpread) { ws.Spec.TargetReference.Kind = "Deployment" }),
			want: refusal{"spec.targetRef.kind", `Unsupported value: "Deployment"`}},
		{input: "maxReplicas mixing numbers and percents", obj: spread("mixed", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets = []musterv1.WorkloadSpreadSubset{subset("a"), subset("b"), subset("c")}
			ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(3))
			ws.Spec.Subsets[1].MaxReplicas = ptr.To(intstr.FromString("50%"))
		}), want: refusal{"spec", "maxReplicas must be integers in every subset or percents in every subset"}},
		{input: "rescheduleCriticalSeconds 296 with two subsets", obj: spread("critical", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.Subsets = []musterv1.WorkloadSpreadSubset{subset("a"), subset("b")}
			ws.Spec.Subsets[0].MaxReplicas = ptr.To(intstr.FromInt32(1))
			ws.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](296)}}
		}), want: refusal{"spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", "with several subsets rescheduleCriticalSeconds must be at most 295 / (subsets - 1)"}},
		{input: "rescheduleCriticalSeconds -1", obj: spread("critical-neg", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To[int32](-1)}}
		}), want: refusal{"spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", "should be greater than or equal to 0"}},
		{input: "adaptive settings with type Fixed", obj: spread("fixed-adaptive", func(ws *musterv1.WorkloadSpread) {
			ws.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleFixed, Adaptive: &musterv1.AdaptiveStrategy{}}
		}), want: refusal{"spec.scheduleStrategy", "adaptive is only allowed with type Adaptive"}},
		// outcome from api/workloadspread (the hub's webhook).
		{input: "subset without clusters", obj: spread("nowhere", first(func(s *musterv1.WorkloadSpreadSubset) { s.ClusterNames = nil })),
			want: refusal{"spec.subsets[0]", "Required value: set clusterSelector or clusterNames"}},
		{input: "patch of the pod's status", obj: spread("patch-status", first(func(s *musterv1.WorkloadSpreadSubset) { s.Patch = patch(`{"status":{"phase":"Running"}}`) })),
			want: refusal{"spec.subsets[0].patch", `the patch may set only metadata and spec of the pod template, not "status"`}},
		{input: "patch with containers a string", obj: spread("patch-type", first(func(s *musterv1.WorkloadSpreadSubset) { s.Patch = patch(`{"spec":{"containers":"x"}}`) })),
			want: refusal{"spec.subsets[0].patch", "Invalid value"}},
		{input: "required node term with operator Near", obj: spread("operator", first(func(s *musterv1.WorkloadSpreadSubset) {
			s.RequiredNodeSelectorTerm = &corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: poolLabel, Operator: "Near", Values: []string{workPool}}}}
		})), want: refusal{"spec.subsets[0].requiredNodeSelectorTerm", "Invalid value"}},
		{input: "targetRef changed", obj: spread("retarget"), change: func(o client.Object) {
			o.(*musterv1.WorkloadSpread).Spec.TargetReference.Name = "another"
		}, want: refusal{"spec.targetRef", "targetRef is immutable"}},
	}
}

// MemberClusters are written by `musterctl join` and the hub administrator; these are
// what an administrator could get wrong.
func memberClusterCases() []refusedCase {
	noSchedule := func(key string) corev1.Taint {
		return corev1.Taint{Key: key, Value: "x", Effect: corev1.TaintEffectNoSchedule}
	}
	var many []corev1.Taint
	for i := range 33 {
		many = append(many, noSchedule(fmt.Sprintf("key-%d", i)))
	}
	return []refusedCase{
		// outcome from api/v1alpha1 (the taint effect enum).
		{input: "taint effect Sometimes", obj: memberCluster("effect", taints(corev1.Taint{Key: "k", Effect: "Sometimes"})),
			want: refusal{"spec.taints", "taint effect must be NoSchedule, PreferNoSchedule or NoExecute"}},
		{input: "taint with an empty key", obj: memberCluster("empty-key", taints(corev1.Taint{Key: "", Effect: corev1.TaintEffectNoSchedule})),
			want: refusal{"spec.taints", "taint key must not be empty"}},
		{input: "33 taints", obj: memberCluster("taints", taints(many...)),
			want: refusal{"spec.taints", "Too many: 33: must have at most 32 items"}},
		{input: "two taints with one key and effect", obj: memberCluster("dup-taint", taints(noSchedule("k"), noSchedule("k"))),
			want: refusal{"spec.taints[1]", "Duplicate value"}},
		{input: "name with a dot", obj: memberCluster("eu.west"),
			want: refusal{"<nil>", "cluster name must be a DNS label of at most 49 characters"}},
		{input: "name of 50 characters", obj: memberCluster(repeat("m", 50)),
			want: refusal{"<nil>", "cluster name must be a DNS label of at most 49 characters"}},
		{input: "name Bad_Name", obj: memberCluster("Bad_Name"),
			want: refusal{"metadata.name", `Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`}},
	}
}

// Works carry manifests to agents; a user (or a tool) with rights on a member namespace
// can write one directly. outcome from api/work (the hub's webhook).
func workCases() []refusedCase {
	cm := configMap("settings", "v", "a")
	var tooMany []string
	for i := range 501 {
		tooMany = append(tooMany, configMap(fmt.Sprintf("cm-%d", i), "v", "a"))
	}
	return []refusedCase{
		{input: "two manifests for one ConfigMap", obj: work("dup", ns, cm, configMap("settings", "v", "b")),
			want: refusal{"spec.manifests[1]", `Duplicate value: "ConfigMap default/settings"`}},
		{input: "feedback JSONPath {.data[}", obj: withFeedback(work("jsonpath", ns, cm), "settings", musterv1.FeedbackJSONPaths, "{.data[}"),
			want: refusal{"spec.feedbackRules[0].jsonPaths[0].path", "not a JSONPath"}},
		{input: "two feedback rules for one ConfigMap", obj: withFeedback(withFeedback(work("dup-rule", ns, cm), "settings", musterv1.FeedbackStatus), "settings", musterv1.FeedbackNone),
			want: refusal{"spec.feedbackRules[1].resource", "Duplicate value"}},
		{input: "manifest without a name", obj: work("no-name", ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default"}}`),
			want: refusal{"spec.manifests[0].metadata.name", "Required value"}},
		{input: "manifest without a kind", obj: work("no-kind", ns, `{"apiVersion":"v1","metadata":{"name":"x"}}`),
			want: refusal{"spec.manifests[0].kind", "Required value"}},
		{input: "manifest without an apiVersion", obj: work("no-version", ns, `{"kind":"ConfigMap","metadata":{"name":"x"}}`),
			want: refusal{"spec.manifests[0].apiVersion", "Required value"}},
		{input: "manifest that is a string", obj: work("string", ns, `"just text"`),
			want: refusal{"spec.manifests[0]", "must be of type object"}},
		{input: "501 manifests", obj: work("too-many", ns, tooMany...),
			want: refusal{"spec.manifests", "Too many: 501: must have at most 500 items"}},
		{input: "name of 64 characters", obj: work(repeat("w", 64), ns, cm),
			want: refusal{"<nil>", "Work name must be at most 63 characters"}},
		{input: "feedback mode JSONPaths without paths", obj: withFeedback(work("no-paths", ns, cm), "settings", musterv1.FeedbackJSONPaths),
			want: refusal{"spec.feedbackRules[0]", "jsonPaths is required with mode JSONPaths and not allowed otherwise"}},
		{input: "feedback mode Everything", obj: withFeedback(work("mode", ns, cm), "settings", "Everything"),
			want: refusal{"spec.feedbackRules[0].mode", `Unsupported value: "Everything"`}},
		{input: "deleteOption Later", obj: func() *musterv1.Work {
			w := work("delete-later", ns, cm)
			w.Spec.DeleteOption = &musterv1.DeleteOption{PropagationPolicy: "Later"}
			return w
		}(), want: refusal{"spec.deleteOption.propagationPolicy", `Unsupported value: "Later"`}},
	}
}

// NodeSlices are written by agents; these are what a broken or hostile agent could send.
func nodeSliceCases() []refusedCase {
	return []refusedCase{
		{input: "501 nodes", obj: nodeSlice("huge", "ghost", 501),
			want: refusal{"nodes", "Too many: 501: must have at most 500 items"}},
		{input: "a node naming a shape the slice does not have", obj: func() *musterv1.NodeSlice {
			s := nodeSlice("no-shape", "ghost", 1)
			s.Nodes[0].Shape = ptr.To[int32](0)
			return s
		}(), want: refusal{"nodes", "a node's shape must be the index of one of the slice's shapes"}},
		{input: "node without a name", obj: func() *musterv1.NodeSlice {
			s := nodeSlice("no-name", "ghost", 1)
			s.Nodes[0].Name = ""
			return s
		}(), want: refusal{"nodes[0].name", "should be at least 1 chars long"}},
		{input: "node name of 254 characters", obj: func() *musterv1.NodeSlice {
			s := nodeSlice("long-node", "ghost", 1)
			s.Nodes[0].Name = repeat("n", 254)
			return s
		}(), want: refusal{"nodes[0].name", "Too long: may not be more than 253 bytes"}},
		{input: "clusterName of another cluster than its namespace's", obj: nodeSlice("forged", "member2", 1),
			want: refusal{"clusterName", `Invalid value: "member2": a NodeSlice in namespace muster-member-ghost must name its cluster, "ghost": a member reports its own nodes only`}},
		{input: "empty clusterName", obj: nodeSlice("no-cluster", "", 1),
			want: refusal{"clusterName", "should be at least 1 chars long"}},
		{input: "clusterName of 50 characters", obj: nodeSlice("long-cluster", repeat("c", 50), 1),
			want: refusal{"clusterName", "Too long: may not be more than 49 bytes"}},
		{input: "clusterName changed", obj: nodeSlice("moved", "ghost", 1), change: func(o client.Object) {
			o.(*musterv1.NodeSlice).ClusterName = "elsewhere"
		}, want: refusal{"clusterName", "clusterName is immutable"}},
	}
}
