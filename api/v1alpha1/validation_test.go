package v1alpha1_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/musterhq/muster/api/v1alpha1"
)

// badInput is one object the API server must reject, with the message a user sees.
type badInput struct {
	name   string
	sample string
	// change turns the valid sample into the bad object.
	change func(t *testing.T, u *unstructured.Unstructured)
	// onUpdate applies change to an object that was created valid, for rules that guard
	// transitions (immutability).
	onUpdate bool
	// want is a fragment of the API server's message.
	want string
}

func setTo(path string, value any) func(*testing.T, *unstructured.Unstructured) {
	return func(t *testing.T, u *unstructured.Unstructured) { set(t, u, path, value) }
}

func all(changes ...func(*testing.T, *unstructured.Unstructured)) func(*testing.T, *unstructured.Unstructured) {
	return func(t *testing.T, u *unstructured.Unstructured) {
		for _, c := range changes {
			c(t, u)
		}
	}
}

func renameTo(name string) func(*testing.T, *unstructured.Unstructured) {
	return func(_ *testing.T, u *unstructured.Unstructured) { u.SetName(name) }
}

func manyNodes(n int) []any {
	nodes := make([]any, n)
	for i := range nodes {
		nodes[i] = map[string]any{"name": "node-" + strings.Repeat("x", 3) + string(rune('a'+i%26)) + "-" + itoa(i)}
	}
	return nodes
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

var badInputs = []badInput{
	// MemberCluster
	{name: "cluster name too long for its hub namespace", sample: "membercluster",
		change: renameTo(strings.Repeat("c", 50)), want: "cluster name must be a DNS label of at most 49 characters"},
	{name: "cluster name with a dot", sample: "membercluster",
		change: renameTo("eu.west"), want: "cluster name must be a DNS label"},

	{name: "cluster taint with an unknown effect", sample: "membercluster",
		change: setTo("spec.taints", []any{map[string]any{"key": "maintenance", "effect": "Sometimes"}}),
		want:   "spec.taints: Invalid value: taint effect must be NoSchedule, PreferNoSchedule or NoExecute"},
	{name: "cluster taint with an empty key", sample: "membercluster",
		change: setTo("spec.taints", []any{map[string]any{"key": "", "effect": "NoSchedule"}}),
		want:   "spec.taints: Invalid value: taint key must not be empty"},

	// NodeSlice
	{name: "node slice over 500 nodes", sample: "nodeslice",
		change: setTo("nodes", manyNodes(501)), want: "must have at most 500 items"},
	{name: "node slice moved to another cluster", sample: "nodeslice", onUpdate: true,
		change: setTo("clusterName", "member2"), want: "clusterName is immutable"},

	// Work
	{name: "work delete propagation not Delete or Orphan", sample: "work",
		change: setTo("spec.deleteOption.propagationPolicy", "Foreground"), want: `Unsupported value: "Foreground"`},
	{name: "work JSONPaths feedback without paths", sample: "work",
		change: setTo("spec.feedbackRules[0].mode", "JSONPaths"), want: "jsonPaths is required with mode JSONPaths"},

	{name: "work name longer than a label value", sample: "work",
		change: renameTo(strings.Repeat("w", 64)), want: "Work name must be at most 63 characters"},

	// FleetJob
	{name: "fleetjob unknown placement mode", sample: "fleetjob",
		change: setTo("spec.placement.mode", "Spread"), want: `Unsupported value: "Spread"`},
	{name: "fleetjob division without mode Divided", sample: "fleetjob",
		change: all(setTo("spec.placement.mode", "Duplicate"), setTo("spec.placement.division", map[string]any{})),
		want:   "division is only allowed with mode Divided"},
	{name: "fleetjob pods that restart Always", sample: "fleetjob",
		change: setTo("spec.template.spec.template.spec.restartPolicy", "Always"), want: "restartPolicy must be Never or OnFailure"},
	{name: "fleetjob shards managed by someone else", sample: "fleetjob",
		change: setTo("spec.template.spec.managedBy", "kueue.x-k8s.io/multikueue"), want: "managedBy must be empty or muster.dev/agent"},
	{name: "fleetjob Indexed without completions", sample: "fleetjob",
		change: setTo("spec.template.spec.completions", nil), want: "an Indexed job needs template.spec.completions"},
	{name: "fleetjob placement mode changed", sample: "fleetjob", onUpdate: true,
		change: setTo("spec.placement.mode", "Duplicate"), want: "spec.placement.mode is immutable"},
	{name: "fleetjob name longer than a label value", sample: "fleetjob",
		change: renameTo(strings.Repeat("f", 64)), want: "FleetJob name must be at most 63 characters"},
	{name: "fleetjob division weight of zero", sample: "fleetjob",
		change: setTo("spec.placement.division", map[string]any{"weights": []any{map[string]any{"clusterName": "member1", "weight": int64(0)}}}),
		want:   "should be greater than or equal to 1"},

	// BroadcastJob
	{name: "broadcastjob pods that restart Always", sample: "broadcastjob",
		change: setTo("spec.template.spec.restartPolicy", "Always"), want: "template.spec.restartPolicy must be Never or OnFailure"},
	{name: "broadcastjob without restartPolicy", sample: "broadcastjob",
		change: setTo("spec.template.spec.restartPolicy", nil), want: "template.spec.restartPolicy must be Never or OnFailure"},
	{name: "broadcastjob deadline with completionPolicy Never", sample: "broadcastjob",
		change: all(setTo("spec.completionPolicy.type", "Never"), setTo("spec.completionPolicy.ttlSecondsAfterFinished", nil)),
		want:   "activeDeadlineSeconds and ttlSecondsAfterFinished are only allowed with completionPolicy type Always"},
	{name: "broadcastjob TTL with completionPolicy Never", sample: "broadcastjob",
		change: all(setTo("spec.completionPolicy.type", "Never"), setTo("spec.completionPolicy.activeDeadlineSeconds", nil)),
		want:   "activeDeadlineSeconds and ttlSecondsAfterFinished are only allowed with completionPolicy type Always"},
	{name: "broadcastjob negative deadline", sample: "broadcastjob",
		change: setTo("spec.completionPolicy.activeDeadlineSeconds", int64(-1)), want: "should be greater than or equal to 0"},
	{name: "broadcastjob parallelism over 100%", sample: "broadcastjob",
		change: setTo("spec.parallelism", "150%"), want: "parallelism must be a non-negative integer or an integer percent from 0% to 100%"},
	{name: "broadcastjob fractional percent", sample: "broadcastjob",
		change: setTo("spec.parallelism", "12.5%"), want: "integer percent from 0% to 100%"},
	{name: "broadcastjob negative parallelism", sample: "broadcastjob",
		change: setTo("spec.parallelism", int64(-1)), want: "parallelism must be a non-negative integer"},
	{name: "broadcastjob unknown failure policy", sample: "broadcastjob",
		change: setTo("spec.failurePolicy.type", "Retry"), want: `Unsupported value: "Retry"`},
	{name: "broadcastjob negative restartLimit", sample: "broadcastjob",
		change: setTo("spec.failurePolicy.restartLimit", int64(-2)), want: "should be greater than or equal to 0"},
	{name: "broadcastjob template presets the controller label", sample: "broadcastjob",
		change: setTo("spec.template.metadata.labels", map[string]any{"app": "x", v1alpha1.ControllerLabel: "mine"}),
		want:   "spec.template.metadata.labels: Forbidden: muster.dev/controller, muster.dev/broadcastjob-name and muster.dev/broadcastjob-uid are set by Muster on the job's pods"},
	{name: "broadcastjob template presets the job-name label", sample: "broadcastjob",
		change: setTo("spec.template.metadata.labels", map[string]any{v1alpha1.BroadcastJobNameLabel: "other"}),
		want:   "spec.template.metadata.labels: Forbidden: muster.dev/controller, muster.dev/broadcastjob-name"},
	{name: "broadcastjob template presets the job-uid label, even empty", sample: "broadcastjob",
		change: setTo("spec.template.metadata.labels", map[string]any{v1alpha1.BroadcastJobUIDLabel: ""}),
		want:   "spec.template.metadata.labels: Forbidden: muster.dev/controller, muster.dev/broadcastjob-name"},
	{name: "broadcastjob template presets the node annotation", sample: "broadcastjob",
		change: setTo("spec.template.metadata.annotations", map[string]any{v1alpha1.NodeAnnotation: "node-1"}),
		want:   "spec.template.metadata.annotations: Forbidden: muster.dev/node and muster.dev/restart-limit-exceeded are set by Muster on the job's pods"},
	{name: "broadcastjob template presets the restart-limit annotation", sample: "broadcastjob",
		change: setTo("spec.template.metadata.annotations", map[string]any{v1alpha1.RestartLimitExceededAnnotation: "1"}),
		want:   "spec.template.metadata.annotations: Forbidden: muster.dev/node and muster.dev/restart-limit-exceeded"},
	{name: "broadcastjob template preset labels changed later", sample: "broadcastjob", onUpdate: true,
		change: setTo("spec.template.metadata.labels", map[string]any{v1alpha1.BroadcastJobUIDLabel: "u"}),
		want:   "spec.template.metadata.labels: Forbidden"},

	// FleetCronJob
	{name: "cronjob with both templates", sample: "fleetcronjob",
		change: func(t *testing.T, u *unstructured.Unstructured) {
			bcj := sample(t, "broadcastjob")
			set(t, u, "spec.broadcastJobTemplate", map[string]any{"spec": get(bcj, "spec")})
		},
		want: "exactly one of jobTemplate and broadcastJobTemplate must be set"},
	{name: "cronjob broadcast template presets a reserved label", sample: "fleetcronjob",
		change: func(t *testing.T, u *unstructured.Unstructured) {
			bcj := sample(t, "broadcastjob")
			set(t, bcj, "spec.template.metadata.labels", map[string]any{v1alpha1.BroadcastJobNameLabel: "x"})
			set(t, u, "spec.jobTemplate", nil)
			set(t, u, "spec.broadcastJobTemplate", map[string]any{"spec": get(bcj, "spec")})
		},
		want: "spec.broadcastJobTemplate.spec.template.metadata.labels: Forbidden"},
	{name: "cronjob with no template", sample: "fleetcronjob",
		change: setTo("spec.jobTemplate", nil), want: "exactly one of jobTemplate and broadcastJobTemplate must be set"},
	{name: "cronjob TZ= in the schedule", sample: "fleetcronjob",
		change: setTo("spec.schedule", "TZ=Europe/Paris 0 * * * *"), want: "use spec.timeZone"},
	{name: "cronjob CRON_TZ= in the schedule", sample: "fleetcronjob",
		change: setTo("spec.schedule", "CRON_TZ=UTC 0 * * * *"), want: "use spec.timeZone"},
	{name: "cronjob empty schedule", sample: "fleetcronjob",
		change: setTo("spec.schedule", ""), want: "spec.schedule: Invalid value"},
	{name: "cronjob unknown concurrency policy", sample: "fleetcronjob",
		change: setTo("spec.concurrencyPolicy", "Sometimes"), want: `Unsupported value: "Sometimes"`},
	{name: "cronjob name too long for its children", sample: "fleetcronjob",
		change: renameTo(strings.Repeat("n", 53)), want: "FleetCronJob name must be at most 52 characters"},
	{name: "cronjob negative history limit", sample: "fleetcronjob",
		change: setTo("spec.successfulJobsHistoryLimit", int64(-1)), want: "should be greater than or equal to 0"},
	{name: "cronjob time zone that is not an IANA name", sample: "fleetcronjob",
		change: setTo("spec.timeZone", "UTC+2 hours"), want: "spec.timeZone in body should match"},

	// WorkloadSpread
	{name: "spread with duplicate subset names", sample: "workloadspread",
		change: setTo("spec.subsets[1].name", "on-prem"), want: "Duplicate value"},
	{name: "spread mixing integer and percent maxReplicas", sample: "workloadspread",
		change: all(setTo("spec.scheduleStrategy", map[string]any{"type": "Fixed"}), setTo("spec.subsets[1].maxReplicas", "50%")),
		want:   "maxReplicas must be integers in every subset or percents in every subset"},
	{name: "spread percent over 100", sample: "workloadspread",
		change: setTo("spec.subsets[0].maxReplicas", "101%"), want: "maxReplicas in body should match '^(100|[1-9]?[0-9])%$'"},
	{name: "spread fractional percent", sample: "workloadspread",
		change: setTo("spec.subsets[0].maxReplicas", "33.3%"), want: "maxReplicas in body should match"},
	{name: "spread negative maxReplicas", sample: "workloadspread",
		change: setTo("spec.subsets[0].maxReplicas", int64(-1)), want: "maxReplicas must not be negative"},
	{name: "spread Adaptive with a bounded last subset", sample: "workloadspread",
		change: setTo("spec.subsets[1].maxReplicas", int64(2)), want: "the last subset must have no maxReplicas"},
	{name: "spread targeting a Deployment", sample: "workloadspread",
		change: all(setTo("spec.targetRef.apiVersion", "apps/v1"), setTo("spec.targetRef.kind", "Deployment")),
		want:   `Unsupported value: "Deployment"`},
	// OpenKruise's bound: a pod must pass every earlier subset within the 5 minutes the
	// first one is skipped.
	{name: "spread rescheduleCriticalSeconds 296 with two subsets", sample: "workloadspread",
		change: setTo("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", int64(296)),
		want:   "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds: Invalid value: with several subsets rescheduleCriticalSeconds must be at most 295 / (subsets - 1)"},
	{name: "spread rescheduleCriticalSeconds 148 with three subsets", sample: "workloadspread",
		change: all(withMiddleSubset, setTo("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", int64(148))),
		want:   "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds: Invalid value: with several subsets rescheduleCriticalSeconds must be at most 295 / (subsets - 1)"},
	{name: "spread negative rescheduleCriticalSeconds", sample: "workloadspread",
		change: setTo("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", int64(-1)), want: "should be greater than or equal to 0"},
	{name: "spread adaptive settings with Fixed", sample: "workloadspread",
		change: setTo("spec.scheduleStrategy.type", "Fixed"), want: "adaptive is only allowed with type Adaptive"},
	{name: "spread without subsets", sample: "workloadspread",
		change: setTo("spec.subsets", []any{}), want: "should have at least 1 items"},
	{name: "spread preferred term of weight 0", sample: "workloadspread",
		change: setTo("spec.subsets[0].preferredNodeSelectorTerms", preferred(0)), want: "weight must be in the range 1-100"},
	{name: "spread preferred term of weight 101", sample: "workloadspread",
		change: setTo("spec.subsets[0].preferredNodeSelectorTerms", preferred(101)), want: "weight must be in the range 1-100"},
	{name: "spread retargeted", sample: "workloadspread", onUpdate: true,
		change: setTo("spec.targetRef.name", "other"), want: "targetRef is immutable"},
}

func TestValidationRejectsBadInput(t *testing.T) {
	for _, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			if tc.onUpdate {
				if err := env.Client.Create(ctx, u); err != nil {
					t.Fatalf("creating the valid object: %v", err)
				}
			}
			tc.change(t, u)
			var err error
			if tc.onUpdate {
				err = env.Client.Update(ctx, u)
			} else {
				err = env.Client.Create(ctx, u)
			}
			if err == nil {
				t.Fatalf("the API server accepted the bad object; want an error containing %q", tc.want)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("error = %v, want an Invalid error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// preferred is one preferred node term of weight.
func preferred(weight int64) []any {
	return []any{map[string]any{"weight": weight, "preference": map[string]any{
		"matchExpressions": []any{map[string]any{"key": "disk", "operator": "In", "values": []any{"ssd"}}},
	}}}
}

// TestMissingSpecIsOneRequiredError: a template without its spec is refused with one
// Required error on the missing spec, not one "no such key" error per rule that reads it.
func TestMissingSpecIsOneRequiredError(t *testing.T) {
	tests := []struct {
		name, sample, path string
		value              any
		want               string
	}{
		{"fleetjob template {}", "fleetjob", "spec.template", map[string]any{},
			"spec.template.spec: Required value: the Job that each shard runs"},
		{"fleetjob pod template {}", "fleetjob", "spec.template.spec.template", map[string]any{},
			"spec.template.spec.template.spec: Required value: the pods of the Job that each shard runs"},
		{"broadcastjob template {}", "broadcastjob", "spec.template", map[string]any{},
			"spec.template.spec: Required value: the pod run on each node"},
		{"cronjob job template {}", "fleetcronjob", "spec.jobTemplate.spec.template", map[string]any{},
			"spec.jobTemplate.spec.template.spec: Required value: the Job that each shard runs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			set(t, u, tc.path, tc.value)
			err := env.Client.Create(ctx, u)
			var status apierrors.APIStatus
			if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
				t.Fatalf("error = %v, want an Invalid error", err)
			}
			causes := status.Status().Details.Causes
			if len(causes) != 1 || causes[0].Field+": "+causes[0].Message != tc.want {
				t.Fatalf("causes = %+v\nwant exactly %q", causes, tc.want)
			}
		})
	}
}

// TestBoundsAreInclusive: the limits refuse only what upstream refuses.
func TestBoundsAreInclusive(t *testing.T) {
	tests := []struct {
		name, sample, path string
		value              any
	}{
		{"preferred term of weight 1", "workloadspread", "spec.subsets[0].preferredNodeSelectorTerms", preferred(1)},
		{"preferred term of weight 100", "workloadspread", "spec.subsets[0].preferredNodeSelectorTerms", preferred(100)},
		{"taint PreferNoSchedule", "membercluster", "spec.taints", []any{map[string]any{"key": "k", "effect": "PreferNoSchedule"}}},
		{"taint NoExecute", "membercluster", "spec.taints", []any{map[string]any{"key": "k", "effect": "NoExecute"}}},
		{"taint with a prefixed key", "membercluster", "spec.taints", []any{map[string]any{"key": "muster.dev/unreachable", "effect": "NoSchedule"}}},
		{"broadcastjob template with labels and annotations of its own, muster.dev ones too", "broadcastjob", "spec.template.metadata",
			map[string]any{"labels": map[string]any{"app": "x", "muster.dev/team": "a"}, "annotations": map[string]any{"muster.dev/owner": "b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			set(t, u, tc.path, tc.value)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// withMiddleSubset puts a bounded subset between the sample spread's two.
func withMiddleSubset(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	subsets, _ := get(u, "spec.subsets").([]any)
	middle := map[string]any{"name": "edge", "clusterNames": []any{"member3"}, "maxReplicas": int64(1)}
	set(t, u, "spec.subsets", []any{subsets[0], middle, subsets[1]})
}

// admitted is an object the API server must admit: change turns the valid sample into it.
type admitted struct {
	name, sample string
	change       func(*testing.T, *unstructured.Unstructured)
}

func expectAdmitted(t *testing.T, cases []admitted) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			tc.change(t, u)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// TestAdmittedAsOpenKruiseAdmits: bounds Muster takes from OpenKruise's webhooks.
func TestAdmittedAsOpenKruiseAdmits(t *testing.T) {
	critical := func(v int64) func(*testing.T, *unstructured.Unstructured) {
		return setTo("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", v)
	}
	expectAdmitted(t, []admitted{
		// The job fails on its first round (agent/broadcastjob, hub/broadcastjob).
		{"broadcastjob activeDeadlineSeconds 0", "broadcastjob", setTo("spec.completionPolicy.activeDeadlineSeconds", int64(0))},
		{"cronjob broadcast template with activeDeadlineSeconds 0", "fleetcronjob", func(t *testing.T, u *unstructured.Unstructured) {
			bcj := sample(t, "broadcastjob")
			set(t, bcj, "spec.completionPolicy.activeDeadlineSeconds", int64(0))
			set(t, u, "spec.jobTemplate", nil)
			set(t, u, "spec.broadcastJobTemplate", map[string]any{"spec": get(bcj, "spec")})
		}},
		// 0 turns rescheduling off (hub/fleetjob).
		{"spread rescheduleCriticalSeconds 0", "workloadspread", critical(0)},
		{"spread rescheduleCriticalSeconds 295 with two subsets", "workloadspread", critical(295)},
		{"spread rescheduleCriticalSeconds 147 with three subsets", "workloadspread", all(withMiddleSubset, critical(147))},
		{"spread of one subset with rescheduleCriticalSeconds 2147483647", "workloadspread", all(
			func(t *testing.T, u *unstructured.Unstructured) {
				subsets, _ := get(u, "spec.subsets").([]any)
				set(t, u, "spec.subsets", subsets[1:])
			}, critical(2147483647))},
	})
}

// TestAdmittedWhereOpenKruiseRefuses: deliberate differences (README, "Where Muster
// differs from upstream").
func TestAdmittedWhereOpenKruiseRefuses(t *testing.T) {
	expectAdmitted(t, []admitted{
		// Pod names <job>-<hash> and the job-name label value take a dot.
		{"broadcastjob named with a dot", "broadcastjob", renameTo("prefetch.v2")},
		// Muster neither sets nor reads OpenKruise's labels; its own are refused.
		{"broadcastjob template with OpenKruise's job labels", "broadcastjob", setTo("spec.template.metadata.labels",
			map[string]any{"broadcastjob-name": "prefetch", "broadcastjob-controller-uid": "0b5e"})},
	})
}

// causesOf are the fields and messages of an Invalid error's causes, sorted.
func causesOf(t *testing.T, err error) []string {
	t.Helper()
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error = %v, want an Invalid error", err)
	}
	var out []string
	for _, c := range status.Status().Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	slices.Sort(out)
	return out
}

// TestBrokenRulesAreReportedInTwoRounds: a refusal lists every schema error (types,
// enums, lengths) at once, and says the CEL rules were not checked; once those are fixed,
// the next refusal lists every broken CEL rule at once. A user fixes an object in at
// most two rounds.
func TestBrokenRulesAreReportedInTwoRounds(t *testing.T) {
	ctx := t.Context()
	u := sample(t, "fleetjob")
	isolate(t, ctx, u)
	u.SetName(strings.Repeat("f", 64))
	set(t, u, "spec.template.spec.template.spec.restartPolicy", "Always")
	set(t, u, "spec.shardFailurePolicy", "Retry")
	set(t, u, "spec.placement.clusterNames", []any{"member1", strings.Repeat("m", 50)})
	got := causesOf(t, env.Client.Create(ctx, u))
	want := []string{
		"<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
		"spec.placement.clusterNames[1]: Too long: may not be more than 49 bytes",
		`spec.shardFailurePolicy: Unsupported value: "Retry": supported values: "FailFast", "Continue"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("first refusal:\n got %q\nwant %q", got, want)
	}
	set(t, u, "spec.shardFailurePolicy", "Continue")
	set(t, u, "spec.placement.clusterNames", []any{"member1"})
	got = causesOf(t, env.Client.Create(ctx, u))
	want = []string{
		"spec: Invalid value: template.spec.template.spec.restartPolicy must be Never or OnFailure",
		"<nil>: Invalid value: FleetJob name must be at most 63 characters: it becomes the shard Jobs' name and a label value on their pods",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("second refusal:\n got %q\nwant %q", got, want)
	}
}
