package v1alpha1_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/musterhq/muster/e2e/envtest"
)

// sample reads deploy/samples/<name>.yaml.
func sample(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "samples", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &u.Object); err != nil {
		t.Fatalf("sample %s: %v", name, err)
	}
	return u
}

var nameSeq atomic.Int32

// isolate gives a sample a namespace of its own test (or, when cluster-scoped, a unique
// name), so tests never collide.
func isolate(t *testing.T, ctx context.Context, u *unstructured.Unstructured) {
	t.Helper()
	n := nameSeq.Add(1)
	if u.GetNamespace() == "" {
		u.SetName(fmt.Sprintf("%s-%d", u.GetName(), n))
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("validation-%d", n)}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	u.SetNamespace(ns.Name)
}

var indexed = regexp.MustCompile(`^(\w+)\[(\d+)\]$`)

// set changes the object at a dotted path such as spec.subsets[1].maxReplicas; a nil
// value removes the field.
func set(t *testing.T, u *unstructured.Unstructured, path string, value any) {
	t.Helper()
	parts := strings.Split(path, ".")
	cur := u.Object
	for i, part := range parts {
		last := i == len(parts)-1
		key, idx := part, -1
		if m := indexed.FindStringSubmatch(part); m != nil {
			key = m[1]
			idx, _ = strconv.Atoi(m[2])
		}
		if idx < 0 {
			if last {
				if value == nil {
					delete(cur, key)
				} else {
					cur[key] = value
				}
				return
			}
			next, ok := cur[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[key] = next
			}
			cur = next
			continue
		}
		list, ok := cur[key].([]any)
		if !ok || idx >= len(list) {
			t.Fatalf("set %s: %s has no element %d", path, key, idx)
		}
		if last {
			list[idx] = value
			return
		}
		cur = list[idx].(map[string]any)
	}
}

// get reads the value at a dotted path without list indexes.
func get(u *unstructured.Unstructured, path string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, strings.Split(path, ".")...)
	return v
}

func TestSamplesAreAccepted(t *testing.T) {
	for _, name := range []string{"membercluster", "work", "nodeslice", "fleetjob", "broadcastjob", "fleetcronjob", "workloadspread"} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, name)
			isolate(t, ctx, u)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatalf("creating sample %s: %v", name, err)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	cases := []struct {
		sample string
		strip  []string
		want   map[string]any
	}{
		{
			sample: "fleetjob",
			strip:  []string{"spec.placement"},
			want:   map[string]any{"spec.placement.mode": "Single", "spec.shardFailurePolicy": "FailFast"},
		},
		{
			sample: "broadcastjob",
			strip:  []string{"spec.completionPolicy", "spec.failurePolicy"},
			want:   map[string]any{"spec.completionPolicy.type": "Always", "spec.failurePolicy.type": "FailFast"},
		},
		{
			sample: "broadcastjob",
			strip:  []string{"spec.completionPolicy.type", "spec.failurePolicy.type"},
			want:   map[string]any{"spec.completionPolicy.type": "Always", "spec.failurePolicy.type": "FailFast"},
		},
		{
			sample: "fleetcronjob",
			strip:  []string{"spec.concurrencyPolicy"},
			want: map[string]any{
				"spec.concurrencyPolicy":          "Allow",
				"spec.suspend":                    false,
				"spec.successfulJobsHistoryLimit": int64(3),
				"spec.failedJobsHistoryLimit":     int64(1),
			},
		},
		{
			sample: "workloadspread",
			strip:  []string{"spec.scheduleStrategy"},
			want:   map[string]any{"spec.scheduleStrategy.type": "Fixed"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.sample, func(t *testing.T) {
			ctx := t.Context()
			u := sample(t, tc.sample)
			for _, p := range tc.strip {
				set(t, u, p, nil)
			}
			isolate(t, ctx, u)
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatal(err)
			}
			for path, want := range tc.want {
				if got := get(u, path); got != want {
					t.Errorf("%s = %#v after create, want default %#v", path, got, want)
				}
			}
		})
	}
}

// TestBroadcastJobTemplateDefaults: a FleetCronJob's BroadcastJob template shows the
// defaults its children get.
func TestBroadcastJobTemplateDefaults(t *testing.T) {
	ctx := t.Context()
	u := sample(t, "fleetcronjob")
	spec := get(sample(t, "broadcastjob"), "spec").(map[string]any)
	delete(spec, "completionPolicy")
	delete(spec, "failurePolicy")
	set(t, u, "spec.jobTemplate", nil)
	set(t, u, "spec.broadcastJobTemplate", map[string]any{"spec": spec})
	isolate(t, ctx, u)
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"spec.broadcastJobTemplate.spec.completionPolicy.type": "Always",
		"spec.broadcastJobTemplate.spec.failurePolicy.type":    "FailFast",
	} {
		if got := get(u, path); got != want {
			t.Errorf("%s = %#v after create, want default %#v", path, got, want)
		}
	}
}
