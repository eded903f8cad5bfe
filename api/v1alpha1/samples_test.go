package v1alpha1_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/musterhq/muster/internal/testing/envtest"
)

// sampleFiles lists every file in deploy/samples.
func sampleFiles(t *testing.T) []string {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in deploy/samples: %v", err)
	}
	return files
}

// sampleDocs reads every object of one sample file, in order.
func sampleDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("sample %s: %v", filepath.Base(path), err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// sample reads the first object of deploy/samples/<name>.yaml.
func sample(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	root, err := envtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return sampleDocs(t, filepath.Join(root, "deploy", "samples", name+".yaml"))[0]
}

var nameSeq atomic.Int32

// isolate gives samples a namespace of their own test (or, when cluster-scoped, unique
// names), so tests never collide; objects of one file share the namespace, as they refer
// to each other by name.
func isolate(t *testing.T, ctx context.Context, objs ...*unstructured.Unstructured) {
	t.Helper()
	n := nameSeq.Add(1)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("validation-%d", n)}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetNamespace() == "" {
			u.SetName(fmt.Sprintf("%s-%d", u.GetName(), n))
			continue
		}
		u.SetNamespace(ns.Name)
	}
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

// get reads the value at a dotted path such as spec.subsets[1].maxReplicas; nil when
// there is none.
func get(u *unstructured.Unstructured, path string) any {
	var cur any = u.Object
	for _, part := range strings.Split(path, ".") {
		key, idx := part, -1
		if m := indexed.FindStringSubmatch(part); m != nil {
			key = m[1]
			idx, _ = strconv.Atoi(m[2])
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = obj[key]
		if idx < 0 {
			continue
		}
		items, ok := cur.([]any)
		if !ok || idx >= len(items) {
			return nil
		}
		cur = items[idx]
	}
	return cur
}

// TestSamplesAreAccepted creates every object of every file in deploy/samples, in file
// order; e2e/samples runs them on a fleet.
func TestSamplesAreAccepted(t *testing.T) {
	for _, path := range sampleFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ctx := t.Context()
			docs := sampleDocs(t, path)
			isolate(t, ctx, docs...)
			for _, u := range docs {
				if err := env.Client.Create(ctx, u); err != nil {
					t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
				}
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
		{
			sample: "workloadspread",
			strip:  []string{"spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds"},
			want:   map[string]any{"spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds": int64(30)},
		},
		{
			sample: "fleetjob",
			strip:  []string{"spec.placement.mode", "spec.shardFailurePolicy"},
			want:   map[string]any{"spec.placement.mode": "Single", "spec.shardFailurePolicy": "FailFast"},
		},
		{
			sample: "broadcastjob",
			strip:  []string{"spec.paused"},
			want:   map[string]any{"spec.paused": false},
		},
		{
			sample: "work",
			strip:  []string{"spec.deleteOption.propagationPolicy", "spec.feedbackRules[0].mode"},
			want:   map[string]any{"spec.deleteOption.propagationPolicy": "Delete", "spec.feedbackRules[0].mode": "Status"},
		},
		{
			sample: "membercluster",
			strip:  []string{"spec.accepted"},
			want:   map[string]any{"spec.accepted": false},
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
