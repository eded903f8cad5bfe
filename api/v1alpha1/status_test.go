package v1alpha1_test

import (
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reread is the object as the API server stores it now.
func reread(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(u.GroupVersionKind())
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(u), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestStatusSubresource: users write spec and controllers write status, each through
// its own endpoint, so neither overwrites the other's half, and only a spec change is a
// new generation (what the controllers' observedGeneration tracks).
func TestStatusSubresource(t *testing.T) {
	cases := []struct {
		sample             string
		specPath           string
		spec               any
		statusPath, status string
	}{
		{"membercluster", "spec.accepted", false, "status.version", "v1.36.3"},
		{"work", "spec.deleteOption.propagationPolicy", "Orphan", "status.conditions", ""},
		{"fleetjob", "spec.shardFailurePolicy", "Continue", "status.phase", "Running"},
		{"broadcastjob", "spec.paused", true, "status.phase", "Paused"},
		{"fleetcronjob", "spec.suspend", true, "status.lastScheduleTime", "2026-01-01T00:00:00Z"},
		{"workloadspread", "spec.subsets[0].maxReplicas", int64(2), "status.subsetReplicas", "on-prem 0/2, cloud 0"},
	}
	for _, tc := range cases {
		t.Run(tc.sample, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			gen := u.GetGeneration()
			status := any(tc.status)
			if tc.status == "" {
				// Work's status has no plain string; a condition stands for it.
				status = []any{map[string]any{"type": "Applied", "status": "True", "reason": "Applied", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}
			}

			// A user's update that carries status leaves status alone.
			set(t, u, tc.statusPath, status)
			if err := env.Client.Update(ctx, u); err != nil {
				t.Fatal(err)
			}
			if got := reread(t, u); get(got, tc.statusPath) != nil || got.GetGeneration() != gen {
				t.Errorf("after an update of the main resource: %s = %v, generation %d; want no status and generation %d",
					tc.statusPath, get(got, tc.statusPath), got.GetGeneration(), gen)
			}

			// A controller's status write that carries spec leaves spec alone.
			u = reread(t, u)
			before := runtime.DeepCopyJSONValue(get(u, strings.Split(tc.specPath, "[")[0]))
			set(t, u, tc.statusPath, status)
			set(t, u, tc.specPath, tc.spec)
			if err := env.Client.Status().Update(ctx, u); err != nil {
				t.Fatal(err)
			}
			got := reread(t, u)
			if get(got, tc.statusPath) == nil || got.GetGeneration() != gen {
				t.Errorf("after a status write: %s = %v, generation %d; want it written and generation %d",
					tc.statusPath, get(got, tc.statusPath), got.GetGeneration(), gen)
			}
			if after := get(got, strings.Split(tc.specPath, "[")[0]); !reflect.DeepEqual(after, before) {
				t.Errorf("a status write changed %s from %v to %v", tc.specPath, before, after)
			}

			// A spec change is a new generation and keeps the status.
			set(t, got, tc.specPath, tc.spec)
			if err := env.Client.Update(ctx, got); err != nil {
				t.Fatal(err)
			}
			if got = reread(t, got); got.GetGeneration() != gen+1 || get(got, tc.statusPath) == nil {
				t.Errorf("after a spec change: generation %d, %s = %v; want generation %d and the status kept",
					got.GetGeneration(), tc.statusPath, get(got, tc.statusPath), gen+1)
			}
		})
	}
}

// condition is a status condition as the controllers write it.
func condition(typ, status, reason string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}
}

// TestStatusValidation: a controller's status write is held to the schema too, so a
// phase or condition that clients switch on is always one they know.
func TestStatusValidation(t *testing.T) {
	cases := []struct {
		name, sample string
		at, past     map[string]any
		want         string
	}{
		{"fleetjob phase", "fleetjob", map[string]any{"phase": "Complete"}, map[string]any{"phase": "Completed"},
			`status.phase: Unsupported value: "Completed": supported values: "Pending", "Running", "Suspended", "Complete", "Failed"`},
		{"broadcastjob phase", "broadcastjob", map[string]any{"phase": "Completed"}, map[string]any{"phase": "Complete"},
			`status.phase: Unsupported value: "Complete": supported values: "Pending", "Running", "Paused", "Completed", "Failed"`},
		{"fleetjob shard phase", "fleetjob",
			map[string]any{"clusters": []any{map[string]any{"clusterName": "member1", "phase": "Suspended"}}},
			map[string]any{"clusters": []any{map[string]any{"clusterName": "member1", "phase": "Paused"}}},
			`status.clusters[0].phase: Unsupported value: "Paused"`},
		{"broadcastjob clusters keyed by name", "broadcastjob",
			map[string]any{"clusters": []any{map[string]any{"clusterName": "member1"}, map[string]any{"clusterName": "member2"}}},
			map[string]any{"clusters": []any{map[string]any{"clusterName": "member1"}, map[string]any{"clusterName": "member1"}}},
			"status.clusters[1]: Duplicate value"},
		{"cluster conditions keyed by type", "membercluster",
			map[string]any{"conditions": []any{condition("Joined", "True", "Joined"), condition("Available", "Unknown", "LeaseExpired")}},
			map[string]any{"conditions": []any{condition("Joined", "True", "Joined"), condition("Joined", "False", "Denied")}},
			"status.conditions[1]: Duplicate value"},
		{"condition status", "work",
			map[string]any{"conditions": []any{condition("Applied", "Unknown", "Applying")}},
			map[string]any{"conditions": []any{condition("Applied", "Maybe", "Applying")}},
			`status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"`},
		{"condition reason a CamelCase word", "fleetcronjob",
			map[string]any{"conditions": []any{condition("ScheduleValid", "False", "InvalidSchedule")}},
			map[string]any{"conditions": []any{condition("ScheduleValid", "False", "invalid schedule")}},
			`status.conditions[0].reason: Invalid value: "invalid schedule": conditions[0].reason in body should match`},
		{"spread subsets keyed by name", "workloadspread",
			map[string]any{"subsets": []any{map[string]any{"name": "on-prem"}, map[string]any{"name": "cloud"}}},
			map[string]any{"subsets": []any{map[string]any{"name": "cloud"}, map[string]any{"name": "cloud"}}},
			"status.subsets[1]: Duplicate value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			u.Object["status"] = tc.at
			if err := env.Client.Status().Update(ctx, u); err != nil {
				t.Fatalf("the valid status was refused: %v", err)
			}
			u.Object["status"] = tc.past
			err := env.Client.Status().Update(ctx, u)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant an Invalid error containing %q", err, tc.want)
			}
		})
	}
}

// TestUpdatesNextToImmutableFields: the rules that freeze a field on update leave the
// rest of the object editable (each field's refusal is in TestValidationRejectsBadInput).
func TestUpdatesNextToImmutableFields(t *testing.T) {
	cases := []struct {
		name, sample string
		change       func(*testing.T, *unstructured.Unstructured)
	}{
		{"nodeslice nodes replaced in place", "nodeslice", func(t *testing.T, u *unstructured.Unstructured) {
			nodes, _ := get(u, "nodes").([]any)
			set(t, u, "nodes", nodes[:1])
			set(t, u, "nodeCount", int64(1))
		}},
		{"nodeslice clusterName written again unchanged", "nodeslice", setTo("clusterName", "member1")},
		{"fleetjob clusters and division changed, mode kept", "fleetjob", all(
			setTo("spec.placement.clusterNames", []any{"member1", "member2", "member3"}),
			setTo("spec.placement.division", map[string]any{"weights": []any{weight(0)}}),
			setTo("spec.template.spec.template.spec.containers[0].image", "busybox:1.37"))},
		{"spread subsets changed, target kept", "workloadspread", all(
			setTo("spec.subsets[0].maxReplicas", int64(4)),
			setTo("spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds", int64(120)))},
		{"broadcastjob template labels of its own changed", "broadcastjob",
			setTo("spec.template.metadata.labels", map[string]any{"app": "prefetch", "muster.dev/team": "b"})},
		{"cronjob switched to a broadcast template", "fleetcronjob", func(t *testing.T, u *unstructured.Unstructured) {
			set(t, u, "spec.jobTemplate", nil)
			set(t, u, "spec.broadcastJobTemplate", map[string]any{"spec": get(sample(t, "broadcastjob"), "spec")})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			isolate(t, ctx, u)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			tc.change(t, u)
			if err := env.Client.Update(ctx, u); err != nil {
				t.Fatalf("update refused: %v", err)
			}
		})
	}
}
