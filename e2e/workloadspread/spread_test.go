//go:build e2e

package workloadspread

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// workers is a FleetJob of parallelism pods that each run for an hour: a work-queue job
// whose pods a spread places.
func workers(name string, parallelism int32) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{"app": name, "e2e.muster.dev/outcome": "Succeeded"},
					Annotations: map[string]string{"e2e.muster.dev/delay": "1h"},
				},
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
			},
		}}},
	}
}

// in is a subset on one member.
func in(name string, m *framework.Cluster, max *intstr.IntOrString) musterv1.WorkloadSpreadSubset {
	return musterv1.WorkloadSpreadSubset{Name: name, ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{m.Name}}, MaxReplicas: max}
}

// start creates the spread, then its FleetJob, and deletes both when the test ends.
func start(t *testing.T, ws *musterv1.WorkloadSpread, fj *musterv1.FleetJob) {
	t.Helper()
	for _, o := range []client.Object{ws, fj} {
		if err := fleet.Hub.Client.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = fleet.Hub.Client.Delete(context.Background(), o) })
	}
}

// shape counts a FleetJob's live pods (neither finished nor being deleted) by
// "subset@member"; pending counts those not yet running.
type shape map[string]int

func (s shape) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, s[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func livePods(ctx context.Context, fj *musterv1.FleetJob) (all, pending shape, pods map[string][]corev1.Pod, err error) {
	all, pending, pods = shape{}, shape{}, map[string][]corev1.Pod{}
	for _, m := range fleet.Members {
		var list corev1.PodList
		if err := m.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": fj.Name}); err != nil {
			return nil, nil, nil, err
		}
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			key := subsetOfJob(fj.Name, p.Labels[batchv1.JobNameLabel]) + "@" + m.Name
			all[key]++
			pods[key] = append(pods[key], p)
			if p.Status.Phase != corev1.PodRunning {
				pending[key]++
			}
		}
	}
	return all, pending, pods, nil
}

// subsetOfJob is the subset of the FleetJob named fj whose shard Job is named job:
// "<fj>-<subset>-<hash>" (names here are short enough not to be cut).
func subsetOfJob(fj, job string) string {
	s := strings.TrimPrefix(job, fj+"-")
	if i := strings.LastIndex(s, "-"); i >= 0 {
		return s[:i]
	}
	return s
}

// waitShape waits until the FleetJob's pods run exactly as want says, none pending, and
// returns them by "subset@member".
func waitShape(t *testing.T, fj *musterv1.FleetJob, want shape, timeout time.Duration) map[string][]corev1.Pod {
	t.Helper()
	var pods map[string][]corev1.Pod
	err := framework.Until(t.Context(), timeout, fmt.Sprintf("pods of %s running as %v", fj.Name, want), func(ctx context.Context) (bool, string, error) {
		all, pending, p, err := livePods(ctx, fj)
		if err != nil {
			return false, err.Error(), nil
		}
		pods = p
		return maps.Equal(all, want) && len(pending) == 0, fmt.Sprintf("live %v pending %v", all, pending), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// holds checks for d that the pods keep running exactly as want says.
func holds(t *testing.T, fj *musterv1.FleetJob, want shape, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		all, _, _, err := livePods(t.Context(), fj)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(all, want) {
			t.Fatalf("pods of %s changed to %v, want %v to hold", fj.Name, all, want)
		}
	}
}

func scale(t *testing.T, fj *musterv1.FleetJob, parallelism int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"parallelism":%d}}}}`, parallelism)
	if err := fleet.Hub.Client.Patch(t.Context(), fj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

func getSpread(t *testing.T, ws *musterv1.WorkloadSpread) *musterv1.WorkloadSpread {
	t.Helper()
	got := &musterv1.WorkloadSpread{}
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(ws), got); err != nil {
		t.Fatal(err)
	}
	return got
}

func subsetStatus(ws *musterv1.WorkloadSpread, name string) musterv1.WorkloadSpreadSubsetStatus {
	for _, s := range ws.Status.Subsets {
		if s.Name == name {
			return s
		}
	}
	return musterv1.WorkloadSpreadSubsetStatus{}
}

func TestSubsetsFillInOrderUpToTheirMax(t *testing.T) {
	t.Parallel()
	ws := spread("fill", "fill", in("a", member1, num(3)), in("b", member2, nil))
	fj := workers("fill", 5)
	start(t, ws, fj)

	want := shape{"a@" + member1.Name: 3, "b@" + member2.Name: 2}
	waitShape(t, fj, want, 2*time.Minute)
	holds(t, fj, want, 5*time.Second)

	got := getSpread(t, ws)
	a, b := subsetStatus(got, "a"), subsetStatus(got, "b")
	if a.Replicas != 3 || a.MissingReplicas != 0 || b.Replicas != 2 || b.MissingReplicas != -1 {
		t.Errorf("spread status a=%+v b=%+v, want a 3 replicas none missing, b 2 unbounded", a, b)
	}
	var job musterv1.FleetJob
	if err := fleet.Hub.Client.Get(t.Context(), client.ObjectKeyFromObject(fj), &job); err != nil {
		t.Fatal(err)
	}
	var shards []string
	for _, c := range job.Status.Clusters {
		shards = append(shards, fmt.Sprintf("%s@%s=%d", c.Subset, c.ClusterName, ptr.Deref(c.Parallelism, 0)))
	}
	if wantShards := []string{"a@" + member1.Name + "=3", "b@" + member2.Name + "=2"}; !slices.Equal(shards, wantShards) || job.Status.Active != 5 {
		t.Errorf("FleetJob shards %v with %d active, want %v with 5", shards, job.Status.Active, wantShards)
	}
}

func TestPercentSubsets(t *testing.T) {
	t.Parallel()
	// Percents of the FleetJob's parallelism round up, as OpenKruise's: 60% of 5 is 3,
	// 40% of 5 is 2.
	for _, tc := range []struct {
		percent string
		a, b    int
	}{{"60%", 3, 2}, {"40%", 2, 3}} {
		t.Run(tc.percent, func(t *testing.T) {
			name := "percent-" + strings.TrimSuffix(tc.percent, "%")
			ws := spread(name, name, in("a", member1, pct(tc.percent)), in("b", member2, nil))
			fj := workers(name, 5)
			start(t, ws, fj)
			waitShape(t, fj, shape{"a@" + member1.Name: tc.a, "b@" + member2.Name: tc.b}, 2*time.Minute)
		})
	}
}

func TestScaleTakesFromTheLastSubsetFirstAndFillsTheFirstFirst(t *testing.T) {
	t.Parallel()
	ws := spread("scale", "scale", in("a", member1, num(3)), in("b", member2, nil))
	fj := workers("scale", 5)
	start(t, ws, fj)
	before := waitShape(t, fj, shape{"a@" + member1.Name: 3, "b@" + member2.Name: 2}, 2*time.Minute)

	scale(t, fj, 2)
	after := waitShape(t, fj, shape{"a@" + member1.Name: 2}, 2*time.Minute)
	// Scaling down removed pods; it started none.
	kept := map[string]bool{}
	for _, p := range before["a@"+member1.Name] {
		kept[p.Name] = true
	}
	for _, p := range after["a@"+member1.Name] {
		if !kept[p.Name] {
			t.Errorf("scaling down to 2 started pod %s in subset a", p.Name)
		}
	}

	scale(t, fj, 6)
	waitShape(t, fj, shape{"a@" + member1.Name: 3, "b@" + member2.Name: 3}, 2*time.Minute)
	if got := subsetStatus(getSpread(t, ws), "a"); got.Replicas != 3 || got.MissingReplicas != 0 {
		t.Errorf("subset a after scaling to 6: %+v, want 3 replicas, none missing", got)
	}
}

func TestSubsetPatchShapesOnlyItsPods(t *testing.T) {
	t.Parallel()
	a := in("a", member1, num(2))
	a.Patch = &runtime.RawExtension{Raw: []byte(`{"metadata":{"labels":{"tier":"big"}},"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"1500m","memory":"1Gi"}}}]}}`)}
	ws := spread("patch", "patch", a, in("b", member2, nil))
	fj := workers("patch", 4)
	start(t, ws, fj)
	pods := waitShape(t, fj, shape{"a@" + member1.Name: 2, "b@" + member2.Name: 2}, 2*time.Minute)

	for key, list := range pods {
		for _, p := range list {
			cpu := p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
			mem := p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory]
			patched := p.Labels["tier"] == "big" && cpu.Equal(resource.MustParse("1500m")) && mem.Equal(resource.MustParse("1Gi"))
			untouched := p.Labels["tier"] == "" && cpu.IsZero() && mem.IsZero()
			if strings.HasPrefix(key, "a@") && !patched {
				t.Errorf("pod %s of subset a: labels %v requests %v, want tier=big and 1500m CPU, 1Gi", p.Name, p.Labels, p.Spec.Containers[0].Resources.Requests)
			}
			if strings.HasPrefix(key, "b@") && !untouched {
				t.Errorf("pod %s of subset b: labels %v requests %v, want neither the label nor requests", p.Name, p.Labels, p.Spec.Containers[0].Resources.Requests)
			}
			if p.Labels["app"] != fj.Name {
				t.Errorf("pod %s lost the template's labels: %v", p.Name, p.Labels)
			}
		}
	}
}

// TestAdaptiveMovesUnschedulablePodsAndTriesAgain runs subset a with pods no node of
// member1 can fit (64 CPUs asked, 8 per node). After rescheduleCriticalSeconds the
// pods run in b instead and a is Schedulable=False for the hub's unschedulable window;
// afterwards a takes new replicas again, which cannot run there either and move once more.
func TestAdaptiveMovesUnschedulablePodsAndTriesAgain(t *testing.T) {
	t.Parallel()
	const critical = 10 * time.Second
	a := in("a", member1, num(3))
	a.Patch = &runtime.RawExtension{Raw: []byte(`{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"64"}}}]}}`)}
	ws := spread("adaptive", "adaptive", a, in("b", member2, nil))
	ws.Spec.ScheduleStrategy = musterv1.ScheduleStrategy{Type: musterv1.ScheduleAdaptive, Adaptive: &musterv1.AdaptiveStrategy{RescheduleCriticalSeconds: ptr.To(int32(critical / time.Second))}}
	fj := workers("adaptive", 5)
	start(t, ws, fj)

	// a's three pods wait for a node; the scheduler says so.
	var firstWait time.Time
	err := framework.Until(t.Context(), 2*time.Minute, "subset a's pods to be unschedulable", func(ctx context.Context) (bool, string, error) {
		_, pending, pods, err := livePods(ctx, fj)
		if err != nil {
			return false, err.Error(), nil
		}
		for _, p := range pods["a@"+member1.Name] {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonUnschedulable && (firstWait.IsZero() || c.LastTransitionTime.Time.Before(firstWait)) {
					firstWait = c.LastTransitionTime.Time
				}
			}
		}
		return !firstWait.IsZero(), fmt.Sprintf("pending %v", pending), nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// They move to b after rescheduleCriticalSeconds; a is marked.
	waitShape(t, fj, shape{"b@" + member2.Name: 5}, 2*time.Minute)
	moved := time.Now()
	marked := schedulable(t, ws, "a")
	if marked.Status != metav1.ConditionFalse || marked.Reason != "PodUnschedulable" {
		t.Fatalf("subset a Schedulable %+v, want False/PodUnschedulable", marked)
	}
	if waited := marked.LastTransitionTime.Sub(firstWait); waited < critical-time.Second {
		t.Errorf("subset a was marked %s after its first pod became unschedulable, before rescheduleCriticalSeconds (%s)", waited, critical)
	}
	t.Logf("subset a marked %s after its first pod became unschedulable (rescheduleCriticalSeconds %s); all 5 pods ran in b %s after that",
		marked.LastTransitionTime.Sub(firstWait), critical, moved.Sub(marked.LastTransitionTime.Time).Round(100*time.Millisecond))
	holds(t, fj, shape{"b@" + member2.Name: 5}, 5*time.Second)

	// A window later a is tried again: the next new replica goes there.
	var again metav1.Condition
	err = framework.Until(t.Context(), unschedulableWindow+100*time.Second, "subset a to be Schedulable again", func(context.Context) (bool, string, error) {
		again = schedulable(t, ws, "a")
		return again.Status == metav1.ConditionTrue, fmt.Sprintf("%s/%s", again.Status, again.Reason), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if window := again.LastTransitionTime.Sub(marked.LastTransitionTime.Time); window < unschedulableWindow-time.Second {
		t.Errorf("subset a was Schedulable again %s after it was marked, want the hub's window of %s", window, unschedulableWindow)
	}
	scale(t, fj, 6)
	err = framework.Until(t.Context(), time.Minute, "a new pod in subset a", func(ctx context.Context) (bool, string, error) {
		all, _, _, err := livePods(ctx, fj)
		if err != nil {
			return false, err.Error(), nil
		}
		return all["a@"+member1.Name] == 1, all.String(), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitShape(t, fj, shape{"b@" + member2.Name: 6}, 2*time.Minute)
	if c := schedulable(t, ws, "a"); c.Status != metav1.ConditionFalse || !c.LastTransitionTime.After(again.LastTransitionTime.Time) {
		t.Errorf("subset a after its new pod could not run: %+v, want False again", c)
	}
}

func schedulable(t *testing.T, ws *musterv1.WorkloadSpread, subset string) metav1.Condition {
	t.Helper()
	st := subsetStatus(getSpread(t, ws), subset)
	if c := meta.FindStatusCondition(st.Conditions, musterv1.SubsetSchedulable); c != nil {
		return *c
	}
	return metav1.Condition{}
}
