package dashboard

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

var now = time.Date(2026, 11, 23, 12, 0, 30, 0, time.UTC)

func available(status metav1.ConditionStatus, msg string) []metav1.Condition {
	return []metav1.Condition{{Type: musterv1.MemberClusterAvailable, Status: status, Reason: "R", Message: msg}}
}

func TestClusterView(t *testing.T) {
	cases := []struct {
		name string
		in   musterv1.MemberCluster
		want Cluster
	}{{
		name: "available with nodes and taints",
		in: musterv1.MemberCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "member1"},
			Spec: musterv1.MemberClusterSpec{Accepted: true, Taints: []corev1.Taint{
				{Key: "gpu", Value: "a100", Effect: corev1.TaintEffectNoSchedule},
				{Key: "draining", Effect: corev1.TaintEffectNoExecute},
			}},
			Status: musterv1.MemberClusterStatus{Version: "v1.36.3", Nodes: &musterv1.NodeCounts{Total: 3, Ready: 2}, Conditions: available(metav1.ConditionTrue, "heartbeat 3s ago")},
		},
		want: Cluster{Name: "member1", Accepted: true, Health: "Available", NodesReady: 2, NodesTotal: 3, Version: "v1.36.3",
			Taints: []string{"gpu=a100:NoSchedule", "draining:NoExecute"}},
	}, {
		name: "unavailable says why",
		in: musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m2"}, Spec: musterv1.MemberClusterSpec{Accepted: true},
			Status: musterv1.MemberClusterStatus{Conditions: available(metav1.ConditionFalse, "no heartbeat for 5m")}},
		want: Cluster{Name: "m2", Accepted: true, Health: "Unavailable", Message: "no heartbeat for 5m"},
	}, {
		name: "accepted, no verdict yet",
		in:   musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m3"}, Spec: musterv1.MemberClusterSpec{Accepted: true}},
		want: Cluster{Name: "m3", Accepted: true, Health: "Unknown"},
	}, {
		name: "not accepted, whatever its heartbeat",
		in: musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "m4"},
			Status: musterv1.MemberClusterStatus{Conditions: available(metav1.ConditionTrue, "")}},
		want: Cluster{Name: "m4", Health: "NotAccepted"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterView(&tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFleetJobView(t *testing.T) {
	template := func(completions *int32) musterv1.FleetJobSpec {
		return musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: completions}}}
	}
	cases := []struct {
		name string
		in   musterv1.FleetJob
		want Job
	}{{
		name: "not placed: the template's completions, the reason it waits",
		in: musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Spec: template(ptr.To[int32](6)),
			Status: musterv1.FleetJobStatus{Conditions: []metav1.Condition{{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionFalse, Reason: "NoEligibleClusters", Message: "no cluster matches region=eu-west"}}}},
		want: Job{Kind: "FleetJob", Namespace: "ns", Name: "pi", Phase: "Pending", Message: "no cluster matches region=eu-west",
			Progress: Progress{Total: 6}, Clusters: []ClusterProgress{}},
	}, {
		name: "divided: totals are the shards' completions, subsets are named",
		in: musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Spec: template(ptr.To[int32](6)),
			Status: musterv1.FleetJobStatus{Phase: musterv1.JobRunning, Active: 2, Succeeded: 3, Failed: 1, Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "m1", Completions: ptr.To[int32](4), Phase: musterv1.JobRunning, Active: 2, Succeeded: 1, Failed: 1},
				{ClusterName: "m2", Subset: "spot", Completions: ptr.To[int32](2), Phase: musterv1.JobComplete, Succeeded: 2},
			}}},
		want: Job{Kind: "FleetJob", Namespace: "ns", Name: "pi", Phase: "Running",
			Progress: Progress{Done: 3, Total: 6, Active: 2, Succeeded: 3, Failed: 1, Percent: 50},
			Clusters: []ClusterProgress{
				{Cluster: "m1", Phase: "Running", Progress: Progress{Done: 1, Total: 4, Active: 2, Succeeded: 1, Failed: 1, Percent: 25}},
				{Cluster: "spot@m2", Phase: "Complete", Progress: Progress{Done: 2, Total: 2, Succeeded: 2, Percent: 100}},
			}},
	}, {
		name: "failed over: an evicted shard counts no longer, the part that took over carries what it had done",
		in: musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Spec: template(ptr.To[int32](4)),
			Status: musterv1.FleetJobStatus{Phase: musterv1.JobRunning, Active: 1, Succeeded: 3, Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "m1", Completions: ptr.To[int32](2), Phase: musterv1.JobComplete, Succeeded: 2},
				{ClusterName: "m1", Part: "abcd1234", Carried: 1, Completions: ptr.To[int32](1), Phase: musterv1.JobRunning, Active: 1},
				{ClusterName: "m2", Completions: ptr.To[int32](2), Phase: musterv1.JobEvicted, Succeeded: 1},
			}}},
		want: Job{Kind: "FleetJob", Namespace: "ns", Name: "pi", Phase: "Running",
			Progress: Progress{Done: 3, Total: 4, Active: 1, Succeeded: 3, Percent: 75},
			Clusters: []ClusterProgress{
				{Cluster: "m1", Phase: "Complete", Progress: Progress{Done: 2, Total: 2, Succeeded: 2, Percent: 100}},
				{Cluster: "m1 (part abcd1234)", Phase: "Running", Progress: Progress{Total: 1, Active: 1}},
				{Cluster: "m2", Phase: "Evicted", Progress: Progress{Done: 1, Total: 2, Succeeded: 1, Percent: 50}},
			}},
	}, {
		name: "shards left out of the status: the total is the status's progress, over every shard",
		in: musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Spec: template(ptr.To[int32](300)),
			Status: musterv1.FleetJobStatus{Phase: musterv1.JobRunning, Active: 1, Succeeded: 299, Progress: "299/300", ClustersOmitted: 299, Clusters: []musterv1.ClusterJobStatus{
				{ClusterName: "m300", Completions: ptr.To[int32](1), Phase: musterv1.JobRunning, Active: 1},
			}}},
		want: Job{Kind: "FleetJob", Namespace: "ns", Name: "pi", Phase: "Running",
			Progress: Progress{Done: 299, Total: 300, Active: 1, Succeeded: 299, Percent: 99},
			Clusters: []ClusterProgress{{Cluster: "m300", Phase: "Running", Progress: Progress{Total: 1, Active: 1}}}},
	}, {
		name: "failed: the failure's message wins over the others",
		in: musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns"}, Spec: template(nil),
			Status: musterv1.FleetJobStatus{Phase: musterv1.JobFailed, Failed: 1,
				Conditions: []metav1.Condition{
					{Type: musterv1.FleetJobScheduled, Status: metav1.ConditionTrue, Reason: "Placed", Message: "placed on m1"},
					{Type: musterv1.FleetJobFailed, Status: metav1.ConditionTrue, Reason: "ShardFailed", Message: "the shard in m1 failed: BackoffLimitExceeded"},
				},
				Clusters: []musterv1.ClusterJobStatus{{ClusterName: "m1", Phase: musterv1.JobFailed, Failed: 1}}}},
		want: Job{Kind: "FleetJob", Namespace: "ns", Name: "pi", Phase: "Failed", Message: "the shard in m1 failed: BackoffLimitExceeded",
			Progress: Progress{Failed: 1},
			Clusters: []ClusterProgress{{Cluster: "m1", Phase: "Failed", Progress: Progress{Failed: 1}}}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fleetJobView(&tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBroadcastJobView(t *testing.T) {
	in := musterv1.BroadcastJob{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "ns"},
		Status: musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobPausedPh,
			BroadcastCounts: musterv1.BroadcastCounts{Desired: 6, Active: 1, Succeeded: 3, Failed: 1},
			Conditions:      []metav1.Condition{{Type: musterv1.BroadcastJobPaused, Status: metav1.ConditionTrue, Reason: "FailurePolicyPause", Message: "paused after a pod failed on node n2 of m1"}},
			Clusters: []musterv1.ClusterBroadcastStatus{
				{ClusterName: "m1", Phase: musterv1.BroadcastJobPausedPh, BroadcastCounts: musterv1.BroadcastCounts{Desired: 3, Succeeded: 1, Failed: 1}},
				{ClusterName: "m2", Phase: musterv1.BroadcastJobRunning, BroadcastCounts: musterv1.BroadcastCounts{Desired: 3, Active: 1, Succeeded: 2}},
			}}}
	want := Job{Kind: "BroadcastJob", Namespace: "ns", Name: "probe", Phase: "Paused", Message: "paused after a pod failed on node n2 of m1",
		// Every finished pod counts: a node runs one, succeeded or not.
		Progress: Progress{Done: 4, Total: 6, Active: 1, Succeeded: 3, Failed: 1, Percent: 66},
		Clusters: []ClusterProgress{
			{Cluster: "m1", Phase: "Paused", Progress: Progress{Done: 2, Total: 3, Succeeded: 1, Failed: 1, Percent: 66}},
			{Cluster: "m2", Phase: "Running", Progress: Progress{Done: 2, Total: 3, Active: 1, Succeeded: 2, Percent: 66}},
		}}
	if diff := cmp.Diff(want, broadcastJobView(&in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestCronView(t *testing.T) {
	last := metav1.NewTime(now.Add(-30 * time.Second).Truncate(time.Minute))
	at := func(s string) *time.Time {
		tt, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &tt
	}
	cases := []struct {
		name string
		spec musterv1.FleetCronJobSpec
		want Cron
	}{{
		name: "every five minutes: next is the next slot after now",
		spec: musterv1.FleetCronJobSpec{Schedule: "*/5 * * * *", JobTemplate: &musterv1.FleetJobTemplateSpec{}},
		want: Cron{Schedule: "*/5 * * * *", Creates: "FleetJob", NextRun: at("2026-11-23T12:05:00Z")},
	}, {
		name: "in a time zone: the slot is on that zone's clock",
		spec: musterv1.FleetCronJobSpec{Schedule: "0 9 * * *", TimeZone: ptr.To("Europe/Berlin"), BroadcastJobTemplate: &musterv1.BroadcastJobTemplateSpec{}},
		want: Cron{Schedule: "0 9 * * *", TimeZone: "Europe/Berlin", Creates: "BroadcastJob", NextRun: at("2026-11-24T09:00:00+01:00")},
	}, {
		name: "suspended: no next run",
		spec: musterv1.FleetCronJobSpec{Schedule: "* * * * *", Suspend: ptr.To(true), JobTemplate: &musterv1.FleetJobTemplateSpec{}},
		want: Cron{Schedule: "* * * * *", Creates: "FleetJob", Suspended: true},
	}, {
		name: "refused by the hub's parser: the parser's reason",
		spec: musterv1.FleetCronJobSpec{Schedule: "@every 5m", JobTemplate: &musterv1.FleetJobTemplateSpec{}},
		want: Cron{Schedule: "@every 5m", Creates: "FleetJob", Problem: "@every is not supported: use a five-field schedule such as */5 * * * *"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cj := musterv1.FleetCronJob{Spec: tc.spec, Status: musterv1.FleetCronJobStatus{LastScheduleTime: &last,
				Active: []corev1.ObjectReference{{Name: "child"}}}}
			tc.want.LastRun, tc.want.Active = &last.Time, 1
			got := cronView(&cj, now)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssembleSorts(t *testing.T) {
	f := assemble(hubObjects{
		Clusters:      []musterv1.MemberCluster{{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, {ObjectMeta: metav1.ObjectMeta{Name: "a"}}},
		FleetJobs:     []musterv1.FleetJob{{ObjectMeta: metav1.ObjectMeta{Name: "y", Namespace: "ns"}}, {ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}}},
		BroadcastJobs: []musterv1.BroadcastJob{{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "a"}}},
	}, now)
	var got []string
	for _, c := range f.Clusters {
		got = append(got, c.Name)
	}
	for _, j := range f.Jobs {
		got = append(got, j.Kind+":"+j.Namespace+"/"+j.Name)
	}
	want := []string{"a", "b", "BroadcastJob:a/x", "FleetJob:ns/x", "FleetJob:ns/y"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if f.Crons == nil {
		t.Error("no crons must be an empty list, not null, in the JSON")
	}
}

func TestSSEEvent(t *testing.T) {
	got := string(sseEvent("fleet", "<p>a</p>\n<p>b\r\nc\rd</p>"))
	want := "event: fleet\ndata: <p>a</p>\ndata: <p>b\ndata: c\ndata: d</p>\n\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRelative(t *testing.T) {
	past, future := now.Add(-3*time.Minute), now.Add(42*time.Second)
	for _, tc := range []struct {
		in   *time.Time
		want string
	}{{nil, "-"}, {&past, "3m ago"}, {&future, "in 42s"}} {
		if got := relative(tc.in, now); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
