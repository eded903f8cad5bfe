package v1alpha1_test

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// boundary is one limit of the API as a pair of objects on either side of it: at turns the
// valid sample into the last object the API server admits, past into the first one it
// refuses, with want in its message. A limit is only known to be where the docs say when
// both hold: a refusal alone passes for a limit set too low.
type boundary struct {
	name, sample string
	at, past     func(*testing.T, *unstructured.Unstructured)
	want         string
}

// list is n items made by item from their index.
func list(n int, item func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

// times is a list of n items made by item, for the boundaries of a MaxItems: at has max
// items, past one more.
func times(path string, max int, item func(i int) any) (at, past func(*testing.T, *unstructured.Unstructured)) {
	return setTo(path, list(max, item)), setTo(path, list(max+1, item))
}

// chars is a string of n characters, a valid DNS label when it is one.
func chars(n int) string { return strings.Repeat("a", n) }

// longer sets path to strings of max and max+1 characters, made by of.
func longer(path string, max int, of func(n int) string) (at, past func(*testing.T, *unstructured.Unstructured)) {
	return setTo(path, of(max)), setTo(path, of(max+1))
}

func taint(i int) any {
	return map[string]any{"key": fmt.Sprintf("k%d", i), "effect": "NoSchedule"}
}

func toleration(i int) any {
	return map[string]any{"key": fmt.Sprintf("k%d", i), "operator": "Exists", "effect": "NoSchedule"}
}

func member(i int) any { return fmt.Sprintf("member-%d", i) }

func weight(i int) any { return map[string]any{"clusterName": member(i), "weight": int64(1)} }

func configMap(i int) any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "greetings"}}
}

func noFeedback(i int) any {
	return map[string]any{"resource": map[string]any{"kind": "ConfigMap", "namespace": "greetings", "name": fmt.Sprintf("cm-%d", i)}, "mode": "None"}
}

func jsonPath(i int) any { return map[string]any{"name": fmt.Sprintf("v%d", i), "path": ".data.k"} }

// jsonPathsRule is the sample Work's feedback rule in mode JSONPaths with paths.
func jsonPathsRule(paths ...any) func(*testing.T, *unstructured.Unstructured) {
	return all(setTo("spec.feedbackRules[0].mode", "JSONPaths"), setTo("spec.feedbackRules[0].jsonPaths", paths))
}

func spreadSubset(i int) any {
	return map[string]any{"name": fmt.Sprintf("s%d", i), "clusterNames": []any{"member1"}}
}

func withSubsetTolerations(n int) func(*testing.T, *unstructured.Unstructured) {
	return setTo("spec.subsets[0].tolerations", list(n, toleration))
}

// broadcastTemplate replaces the sample FleetCronJob's job template with the sample
// BroadcastJob's spec, changed by change.
func broadcastTemplate(change func(*testing.T, *unstructured.Unstructured)) func(*testing.T, *unstructured.Unstructured) {
	return func(t *testing.T, u *unstructured.Unstructured) {
		bcj := sample(t, "broadcastjob")
		change(t, bcj)
		set(t, u, "spec.jobTemplate", nil)
		set(t, u, "spec.broadcastJobTemplate", map[string]any{"spec": get(bcj, "spec")})
	}
}

// pairs of the bounds the types' markers set, in the order of the kinds in the docs.
func boundaries() []boundary {
	var b []boundary
	add := func(name, sample string, at, past func(*testing.T, *unstructured.Unstructured), want string) {
		b = append(b, boundary{name: name, sample: sample, at: at, past: past, want: want})
	}
	tooMany := func(max int) string { return fmt.Sprintf("must have at most %d items", max) }
	tooLong := func(max int) string { return fmt.Sprintf("may not be more than %d bytes", max) }

	// MemberCluster
	at, past := times("spec.taints", 32, taint)
	add("cluster taints", "membercluster", at, past, "spec.taints: Too many: 33: "+tooMany(32))
	add("cluster taints keyed by key and effect", "membercluster",
		setTo("spec.taints", []any{taint(0), map[string]any{"key": "k0", "effect": "NoExecute"}}),
		setTo("spec.taints", []any{taint(0), taint(0)}), "spec.taints[1]: Duplicate value")
	add("cluster taint effect required", "membercluster", setTo("spec.taints", []any{taint(0)}),
		setTo("spec.taints", []any{map[string]any{"key": "k0"}}), "spec.taints[0].effect: Required value")
	add("cluster name of digits and dashes", "membercluster", renameTo("0-eu-west-1"), renameTo("EU-west-1"),
		"cluster name must be a DNS label")
	add("cluster name ends with a letter or digit", "membercluster", renameTo("eu-west-1"), renameTo("eu-west-"),
		"cluster name must be a DNS label")

	// NodeSlice
	at, past = longer("clusterName", 49, chars)
	add("nodeslice clusterName length", "nodeslice", at, past, "clusterName: Too long: "+tooLong(49))
	add("nodeslice clusterName not empty", "nodeslice", setTo("clusterName", "m"), setTo("clusterName", ""),
		"clusterName: Invalid value: \"\": clusterName in body should be at least 1 chars long")
	at, past = longer("nodes[0].name", 253, chars)
	add("nodeslice node name length", "nodeslice", at, past, "nodes[0].name: Too long: "+tooLong(253))
	add("nodeslice node name not empty", "nodeslice", setTo("nodes[0].name", "n"), setTo("nodes[0].name", ""),
		"should be at least 1 chars long")
	at, past = times("shapes", 500, func(int) any { return map[string]any{"labels": map[string]any{"pool": "general"}} })
	add("nodeslice shapes", "nodeslice", at, past, "shapes: Too many: 501: "+tooMany(500))
	add("nodeslice node shape is one of the slice's", "nodeslice", setTo("nodes[2].shape", int64(1)), setTo("nodes[2].shape", int64(2)),
		"a node's shape must be the index of one of the slice's shapes")
	add("nodeslice node shape not negative", "nodeslice", setTo("nodes[0].shape", int64(0)), setTo("nodes[0].shape", int64(-1)),
		"nodes[0].shape: Invalid value: -1: nodes[0].shape in body should be greater than or equal to 0")

	// Work
	at, past = times("spec.manifests", 500, configMap)
	add("work manifests", "work", at, past, "spec.manifests: Too many: 501: "+tooMany(500))
	at, past = times("spec.feedbackRules", 500, noFeedback)
	add("work feedback rules", "work", at, past, "spec.feedbackRules: Too many: 501: "+tooMany(500))
	add("work JSONPaths of one rule", "work", jsonPathsRule(list(32, jsonPath)...), jsonPathsRule(list(33, jsonPath)...),
		"spec.feedbackRules[0].jsonPaths: Too many: 33: "+tooMany(32))
	add("work JSONPath names unique", "work", jsonPathsRule(jsonPath(0), jsonPath(1)), jsonPathsRule(jsonPath(0), jsonPath(0)),
		"spec.feedbackRules[0].jsonPaths[1]: Duplicate value")
	add("work JSONPath name length", "work",
		jsonPathsRule(map[string]any{"name": chars(63), "path": ".data"}), jsonPathsRule(map[string]any{"name": chars(64), "path": ".data"}),
		"spec.feedbackRules[0].jsonPaths[0].name: Too long: "+tooLong(63))
	add("work JSONPath name not empty", "work",
		jsonPathsRule(map[string]any{"name": "v", "path": ".data"}), jsonPathsRule(map[string]any{"name": "", "path": ".data"}),
		"spec.feedbackRules[0].jsonPaths[0].name: Invalid value: \"\": spec.feedbackRules[0].jsonPaths[0].name in body should be at least 1 chars long")
	add("work JSONPath path length", "work",
		jsonPathsRule(map[string]any{"name": "v", "path": "." + chars(511)}), jsonPathsRule(map[string]any{"name": "v", "path": "." + chars(512)}),
		"spec.feedbackRules[0].jsonPaths[0].path: Too long: "+tooLong(512))
	add("work JSONPaths only with mode JSONPaths", "work", jsonPathsRule(jsonPath(0)),
		all(jsonPathsRule(jsonPath(0)), setTo("spec.feedbackRules[0].mode", "Status")),
		"jsonPaths is required with mode JSONPaths and not allowed otherwise")
	add("work feedback mode", "work", setTo("spec.feedbackRules[0].mode", "Status"), setTo("spec.feedbackRules[0].mode", "Everything"),
		`spec.feedbackRules[0].mode: Unsupported value: "Everything": supported values: "Status", "JSONPaths", "None"`)
	add("work delete propagation Orphan", "work", setTo("spec.deleteOption.propagationPolicy", "Orphan"),
		setTo("spec.deleteOption.propagationPolicy", "orphan"), `Unsupported value: "orphan"`)
	add("work manifest with a kind", "work", setTo("spec.manifests[0].kind", "ConfigMap"), setTo("spec.manifests[0].kind", nil),
		"spec.manifests[0].kind: Required value")
	add("work manifest with an apiVersion", "work", setTo("spec.manifests[0].apiVersion", "v1"), setTo("spec.manifests[0].apiVersion", nil),
		"spec.manifests[0].apiVersion: Required value")
	add("work manifest an object", "work", setTo("spec.manifests[0]", configMap(0)), setTo("spec.manifests[0]", "kind: ConfigMap"),
		`spec.manifests[0]: Invalid value: "string": spec.manifests[0] in body must be of type object`)
	add("work feedback rule names a kind", "work", setTo("spec.feedbackRules[0].resource.kind", "Secret"),
		setTo("spec.feedbackRules[0].resource.kind", nil), "spec.feedbackRules[0].resource.kind: Required value")

	return append(b, fleetBoundaries()...)
}

// fleetBoundaries are the bounds of the kinds that run workloads over the fleet.
func fleetBoundaries() []boundary {
	var b []boundary
	add := func(name, sample string, at, past func(*testing.T, *unstructured.Unstructured), want string) {
		b = append(b, boundary{name: name, sample: sample, at: at, past: past, want: want})
	}
	tooMany := func(max int) string { return fmt.Sprintf("must have at most %d items", max) }
	tooLong := func(max int) string { return fmt.Sprintf("may not be more than %d bytes", max) }
	oneWeight := func(w int64) func(*testing.T, *unstructured.Unstructured) {
		return setTo("spec.placement.division", map[string]any{"weights": []any{map[string]any{"clusterName": "member1", "weight": w}}})
	}
	weightOf := func(name string) func(*testing.T, *unstructured.Unstructured) {
		return setTo("spec.placement.division", map[string]any{"weights": []any{map[string]any{"clusterName": name, "weight": int64(1)}}})
	}

	// FleetJob
	add("fleetjob division weight", "fleetjob", oneWeight(1000), oneWeight(1001),
		"spec.placement.division.weights[0].weight: Invalid value: 1001: spec.placement.division.weights[0].weight in body should be less than or equal to 1000")
	add("fleetjob division weight of one", "fleetjob", oneWeight(1), oneWeight(0), "should be greater than or equal to 1")
	add("fleetjob division weights", "fleetjob",
		setTo("spec.placement.division", map[string]any{"weights": list(256, weight)}),
		setTo("spec.placement.division", map[string]any{"weights": list(257, weight)}),
		"spec.placement.division.weights: Too many: 257: "+tooMany(256))
	add("fleetjob division weight cluster name length", "fleetjob", weightOf(chars(49)), weightOf(chars(50)),
		"spec.placement.division.weights[0].clusterName: Too long: "+tooLong(49))
	add("fleetjob division weight cluster name not empty", "fleetjob", weightOf("m"), weightOf(""), "should be at least 1 chars long")
	add("fleetjob division weights keyed by cluster", "fleetjob",
		setTo("spec.placement.division", map[string]any{"weights": []any{weight(0), weight(1)}}),
		setTo("spec.placement.division", map[string]any{"weights": []any{weight(0), weight(0)}}),
		"spec.placement.division.weights[1]: Duplicate value")
	at, past := times("spec.placement.clusterNames", 256, member)
	add("fleetjob cluster names", "fleetjob", at, past, "spec.placement.clusterNames: Too many: 257: "+tooMany(256))
	at, past = longer("spec.placement.clusterNames[0]", 49, chars)
	add("fleetjob cluster name length", "fleetjob", at, past, "spec.placement.clusterNames[0]: Too long: "+tooLong(49))
	add("fleetjob cluster names a set", "fleetjob", setTo("spec.placement.clusterNames", []any{"member1", "member2"}),
		setTo("spec.placement.clusterNames", []any{"member1", "member1"}), `spec.placement.clusterNames[1]: Duplicate value: "member1"`)
	at, past = times("spec.placement.tolerations", 32, toleration)
	add("fleetjob tolerations", "fleetjob", at, past, "spec.placement.tolerations: Too many: 33: "+tooMany(32))
	add("fleetjob shards managed by the agent", "fleetjob", setTo("spec.template.spec.managedBy", "muster.dev/agent"),
		setTo("spec.template.spec.managedBy", "muster.dev/agent2"), "managedBy must be empty or muster.dev/agent")
	add("fleetjob pods that restart OnFailure", "fleetjob", setTo("spec.template.spec.template.spec.restartPolicy", "OnFailure"),
		setTo("spec.template.spec.template.spec.restartPolicy", nil), "restartPolicy must be Never or OnFailure")
	add("fleetjob completions needed only when Indexed", "fleetjob",
		all(setTo("spec.template.spec.completionMode", "NonIndexed"), setTo("spec.template.spec.completions", nil)),
		all(setTo("spec.template.spec.completionMode", "Indexed"), setTo("spec.template.spec.completions", nil)),
		"an Indexed job needs template.spec.completions")
	add("fleetjob name length", "fleetjob", renameTo(chars(63)), renameTo(chars(64)), "FleetJob name must be at most 63 characters")
	add("fleetjob shard failure policy", "fleetjob", setTo("spec.shardFailurePolicy", "Continue"), setTo("spec.shardFailurePolicy", "Retry"),
		`spec.shardFailurePolicy: Unsupported value: "Retry": supported values: "FailFast", "Continue"`)

	// BroadcastJob
	add("broadcastjob name length", "broadcastjob", renameTo(chars(63)), renameTo(chars(64)),
		"BroadcastJob name must be at most 63 characters: it becomes a label value on its pods")
	add("broadcastjob parallelism 100%", "broadcastjob", setTo("spec.parallelism", "100%"), setTo("spec.parallelism", "101%"),
		"parallelism must be a non-negative integer or an integer percent from 0% to 100%")
	add("broadcastjob parallelism 0%", "broadcastjob", setTo("spec.parallelism", "0%"), setTo("spec.parallelism", "00%"),
		"integer percent from 0% to 100%")
	add("broadcastjob parallelism 0", "broadcastjob", setTo("spec.parallelism", int64(0)), setTo("spec.parallelism", "-1%"),
		"integer percent from 0% to 100%")
	add("broadcastjob parallelism percent written plainly", "broadcastjob", setTo("spec.parallelism", "5%"), setTo("spec.parallelism", "05%"),
		"integer percent from 0% to 100%")
	add("broadcastjob parallelism without a percent sign", "broadcastjob", setTo("spec.parallelism", int64(7)), setTo("spec.parallelism", "7"),
		"integer percent from 0% to 100%")
	add("broadcastjob ttl", "broadcastjob", setTo("spec.completionPolicy.ttlSecondsAfterFinished", int64(0)),
		setTo("spec.completionPolicy.ttlSecondsAfterFinished", int64(-1)), "should be greater than or equal to 0")
	add("broadcastjob completionPolicy Never without deadline and TTL", "broadcastjob",
		all(setTo("spec.completionPolicy.activeDeadlineSeconds", nil), setTo("spec.completionPolicy.ttlSecondsAfterFinished", nil), setTo("spec.completionPolicy.type", "Never")),
		all(setTo("spec.completionPolicy.activeDeadlineSeconds", nil), setTo("spec.completionPolicy.ttlSecondsAfterFinished", nil), setTo("spec.completionPolicy.type", "Sometimes")),
		`spec.completionPolicy.type: Unsupported value: "Sometimes"`)
	add("broadcastjob restartLimit", "broadcastjob", setTo("spec.failurePolicy.restartLimit", int64(0)), setTo("spec.failurePolicy.restartLimit", int64(-1)),
		"spec.failurePolicy.restartLimit: Invalid value: -1: spec.failurePolicy.restartLimit in body should be greater than or equal to 0")
	add("broadcastjob failure policy Pause", "broadcastjob", setTo("spec.failurePolicy.type", "Pause"), setTo("spec.failurePolicy.type", "pause"),
		`Unsupported value: "pause"`)
	at, past = times("spec.placement.clusterNames", 256, member)
	add("broadcastjob cluster names", "broadcastjob", at, past, "spec.placement.clusterNames: Too many: 257: "+tooMany(256))
	at, past = times("spec.placement.tolerations", 32, toleration)
	add("broadcastjob tolerations", "broadcastjob", at, past, "spec.placement.tolerations: Too many: 33: "+tooMany(32))

	return append(b, scheduleBoundaries()...)
}

// scheduleBoundaries are the bounds of FleetCronJob and WorkloadSpread.
func scheduleBoundaries() []boundary {
	var b []boundary
	add := func(name, sample string, at, past func(*testing.T, *unstructured.Unstructured), want string) {
		b = append(b, boundary{name: name, sample: sample, at: at, past: past, want: want})
	}
	tooMany := func(max int) string { return fmt.Sprintf("must have at most %d items", max) }
	tooLong := func(max int) string { return fmt.Sprintf("may not be more than %d bytes", max) }
	// A schedule padded with spaces: the API server bounds its length, the hub parses it.
	schedule := func(n int) string { return "0 * * * *" + strings.Repeat(" ", n-len("0 * * * *")) }
	zone := func(n int) string { return "Etc/" + strings.Repeat("Z", n-len("Etc/")) }
	fixed := setTo("spec.scheduleStrategy", map[string]any{"type": "Fixed"})

	// FleetCronJob
	at, past := longer("spec.schedule", 256, schedule)
	add("cronjob schedule length", "fleetcronjob", at, past, "spec.schedule: Too long: "+tooLong(256))
	at, past = longer("spec.timeZone", 64, zone)
	add("cronjob time zone length", "fleetcronjob", at, past, "spec.timeZone: Too long: "+tooLong(64))
	add("cronjob time zone not empty", "fleetcronjob", setTo("spec.timeZone", "UTC"), setTo("spec.timeZone", ""),
		"spec.timeZone in body should be at least 1 chars long")
	add("cronjob time zone with a +", "fleetcronjob", setTo("spec.timeZone", "Etc/GMT+2"), setTo("spec.timeZone", "Etc/GMT 2"),
		"spec.timeZone in body should match")
	add("cronjob time zone of three parts", "fleetcronjob", setTo("spec.timeZone", "America/Argentina/Buenos_Aires"),
		setTo("spec.timeZone", "America//Buenos_Aires"), "spec.timeZone in body should match")
	add("cronjob time zone not rooted", "fleetcronjob", setTo("spec.timeZone", "Europe/Berlin"), setTo("spec.timeZone", "/Europe/Berlin"),
		"spec.timeZone in body should match")
	add("cronjob time zone starts with a letter", "fleetcronjob", setTo("spec.timeZone", "EST5EDT"), setTo("spec.timeZone", "5EST"),
		"spec.timeZone in body should match")
	add("cronjob starting deadline", "fleetcronjob", setTo("spec.startingDeadlineSeconds", int64(0)), setTo("spec.startingDeadlineSeconds", int64(-1)),
		"spec.startingDeadlineSeconds: Invalid value: -1: spec.startingDeadlineSeconds in body should be greater than or equal to 0")
	add("cronjob failed history limit", "fleetcronjob", setTo("spec.failedJobsHistoryLimit", int64(0)), setTo("spec.failedJobsHistoryLimit", int64(-1)),
		"spec.failedJobsHistoryLimit: Invalid value: -1: spec.failedJobsHistoryLimit in body should be greater than or equal to 0")
	add("cronjob name length", "fleetcronjob", renameTo(chars(52)), renameTo(chars(53)), "FleetCronJob name must be at most 52 characters")
	add("cronjob concurrency Replace", "fleetcronjob", setTo("spec.concurrencyPolicy", "Replace"), setTo("spec.concurrencyPolicy", "replace"),
		`spec.concurrencyPolicy: Unsupported value: "replace"`)
	// The FleetJob rules hold in a template too: the hub would create children it refuses.
	add("cronjob job template pods restart OnFailure", "fleetcronjob",
		setTo("spec.jobTemplate.spec.template.spec.template.spec.restartPolicy", "Never"),
		setTo("spec.jobTemplate.spec.template.spec.template.spec.restartPolicy", "Always"),
		"spec.jobTemplate.spec: Invalid value: template.spec.template.spec.restartPolicy must be Never or OnFailure")
	add("cronjob broadcast template parallelism", "fleetcronjob", broadcastTemplate(setTo("spec.parallelism", "100%")),
		broadcastTemplate(setTo("spec.parallelism", "150%")),
		"spec.broadcastJobTemplate.spec.parallelism: Invalid value: \"150%\": parallelism must be a non-negative integer or an integer percent from 0% to 100%")
	add("cronjob broadcast template deadline only with completionPolicy Always", "fleetcronjob",
		broadcastTemplate(setTo("spec.completionPolicy", map[string]any{"type": "Never"})),
		broadcastTemplate(setTo("spec.completionPolicy", map[string]any{"type": "Never", "activeDeadlineSeconds": int64(60)})),
		"spec.broadcastJobTemplate.spec.completionPolicy: Invalid value: activeDeadlineSeconds and ttlSecondsAfterFinished are only allowed with completionPolicy type Always")
	add("cronjob job template division only with Divided", "fleetcronjob",
		all(setTo("spec.jobTemplate.spec.placement.mode", "Divided"), setTo("spec.jobTemplate.spec.placement.division", map[string]any{})),
		setTo("spec.jobTemplate.spec.placement.division", map[string]any{}), "division is only allowed with mode Divided")

	// WorkloadSpread
	at, past = times("spec.subsets", 16, spreadSubset)
	add("spread subsets", "workloadspread", all(fixed, at), all(fixed, past), "spec.subsets: Too many: 17: "+tooMany(16))
	adaptive := func(seconds int64) func(*testing.T, *unstructured.Unstructured) {
		return setTo("spec.scheduleStrategy", map[string]any{"type": "Adaptive", "adaptive": map[string]any{"rescheduleCriticalSeconds": seconds}})
	}
	most := setTo("spec.subsets", list(16, spreadSubset))
	add("spread rescheduleCriticalSeconds with the most subsets (295 / 15)", "workloadspread", all(most, adaptive(19)), all(most, adaptive(20)),
		"with several subsets rescheduleCriticalSeconds must be at most 295 / (subsets - 1)")
	at, past = longer("spec.subsets[0].name", 63, chars)
	add("spread subset name length", "workloadspread", at, past, "spec.subsets[0].name: Too long: "+tooLong(63))
	add("spread subset name a DNS label", "workloadspread", setTo("spec.subsets[0].name", "zone-1a"), setTo("spec.subsets[0].name", "Zone-1a"),
		"spec.subsets[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'")
	at, past = longer("spec.targetRef.name", 253, chars)
	add("spread target name length", "workloadspread", at, past, "spec.targetRef.name: Too long: "+tooLong(253))
	add("spread target API version", "workloadspread", setTo("spec.targetRef.apiVersion", "muster.dev/v1alpha1"),
		setTo("spec.targetRef.apiVersion", "muster.dev/v1"), `spec.targetRef.apiVersion: Unsupported value: "muster.dev/v1"`)
	add("spread preferred terms", "workloadspread", setTo("spec.subsets[0].preferredNodeSelectorTerms", list(32, func(int) any { return preferred(50)[0] })),
		setTo("spec.subsets[0].preferredNodeSelectorTerms", list(33, func(int) any { return preferred(50)[0] })),
		"spec.subsets[0].preferredNodeSelectorTerms: Too many: 33: "+tooMany(32))
	add("spread subset tolerations", "workloadspread", withSubsetTolerations(32), withSubsetTolerations(33),
		"spec.subsets[0].tolerations: Too many: 33: "+tooMany(32))
	add("spread maxReplicas 0% and 100%", "workloadspread",
		all(fixed, setTo("spec.subsets[0].maxReplicas", "0%"), setTo("spec.subsets[1].maxReplicas", "100%")),
		all(fixed, setTo("spec.subsets[0].maxReplicas", "0%"), setTo("spec.subsets[1].maxReplicas", "100.0%")),
		"spec.subsets[1].maxReplicas in body should match")
	add("spread maxReplicas 0", "workloadspread", setTo("spec.subsets[0].maxReplicas", int64(0)), setTo("spec.subsets[0].maxReplicas", int64(-1)),
		"maxReplicas must not be negative")
	add("spread Fixed may bound its last subset", "workloadspread", all(fixed, setTo("spec.subsets[1].maxReplicas", int64(2))),
		all(setTo("spec.scheduleStrategy.type", "Adaptive"), setTo("spec.subsets[1].maxReplicas", int64(2))),
		"the last subset must have no maxReplicas")
	add("spread strategy type", "workloadspread", fixed, setTo("spec.scheduleStrategy", map[string]any{"type": "fixed"}),
		`spec.scheduleStrategy.type: Unsupported value: "fixed": supported values: "Fixed", "Adaptive"`)
	return b
}

// TestBoundaries: each limit of the API admits the object at it and refuses the one past
// it, with the message a user sees.
func TestBoundaries(t *testing.T) {
	for _, tc := range boundaries() {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			ok, bad := sample(t, tc.sample), sample(t, tc.sample)
			isolate(t, ctx, ok)
			isolate(t, ctx, bad)
			tc.at(t, ok)
			tc.past(t, bad)
			if err := env.Client.Create(ctx, ok); err != nil {
				t.Errorf("the object at the limit was refused: %v", err)
			}
			err := env.Client.Create(ctx, bad)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("the object past the limit: error = %v, want an Invalid error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
