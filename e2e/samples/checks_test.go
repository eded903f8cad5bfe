//go:build e2e

package samples

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/worksync"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// The names the samples use and the demo fleet's shape their headers assume.
const (
	sampleNamespace = "default"
	demoFleetNodes  = demoMembers * demoNodes
)

func member(t *testing.T, name string) client.Client {
	t.Helper()
	for _, m := range fleet.Members {
		if m.Name == name {
			return m.Client
		}
	}
	t.Fatalf("the fleet has no member %s", name)
	return nil
}

// membercluster.yaml: member1 labelled region=eu-west, still accepted, Joined and Available.
func checkMemberCluster(t *testing.T, ctx context.Context) {
	kubectl(t, ctx, "apply", "-f", samplePath("membercluster.yaml"))
	waitFor(t, ctx, time.Minute, "member1 labelled, accepted, Joined and Available", func(ctx context.Context) (bool, string, error) {
		var mc musterv1.MemberCluster
		if err := fleet.Hub.Client.Get(ctx, key("", "member1"), &mc); err != nil {
			return false, err.Error(), nil
		}
		ok := mc.Labels["region"] == "eu-west" && mc.Spec.Accepted &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterJoined) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		return ok, fmt.Sprintf("labels %v accepted %v conditions %v", mc.Labels, mc.Spec.Accepted, conditionSummary(mc.Status.Conditions)), nil
	})
}

// work.yaml: Applied and Available, the ConfigMap in member1's namespace greetings, which
// the agent created and marked; deleting the Work deletes the ConfigMap, the namespace stays.
func checkWork(t *testing.T, ctx context.Context) {
	kubectl(t, ctx, "apply", "-f", samplePath("work.yaml"))
	waitFor(t, ctx, time.Minute, "Work hello Applied and Available", func(ctx context.Context) (bool, string, error) {
		var w musterv1.Work
		if err := fleet.Hub.Client.Get(ctx, key(musterv1.MemberNamespace("member1"), "hello"), &w); err != nil {
			return false, err.Error(), nil
		}
		ok := meta.IsStatusConditionTrue(w.Status.Conditions, musterv1.WorkApplied) && meta.IsStatusConditionTrue(w.Status.Conditions, musterv1.WorkAvailable)
		return ok, conditionSummary(w.Status.Conditions), nil
	})
	m1 := member(t, "member1")
	var cm corev1.ConfigMap
	if err := m1.Get(ctx, key("greetings", "hello"), &cm); err != nil {
		t.Fatalf("member1 has no ConfigMap greetings/hello: %v", err)
	}
	if cm.Data["greeting"] != "hello from the hub" {
		t.Errorf("ConfigMap greetings/hello data %v, want greeting: hello from the hub", cm.Data)
	}
	var ns corev1.Namespace
	if err := m1.Get(ctx, key("", "greetings"), &ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels[worksync.CreatedNamespaceLabel] != worksync.FieldManager {
		t.Errorf("namespace greetings labels %v, want it marked as created by the agent", ns.Labels)
	}
	kubectl(t, ctx, "delete", "-f", samplePath("work.yaml"))
	waitFor(t, ctx, time.Minute, "the ConfigMap deleted from member1", func(ctx context.Context) (bool, string, error) {
		err := m1.Get(ctx, key("greetings", "hello"), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), fmt.Sprintf("ConfigMap: %v", err), nil
	})
	if err := m1.Get(ctx, key("", "greetings"), &ns); err != nil || ns.DeletionTimestamp != nil {
		t.Errorf("namespace greetings went with the Work (err %v, deletion %v); it should stay", err, ns.DeletionTimestamp)
	}
}

// nodeslice.yaml: for illustration; a server-side dry run is accepted and changes nothing.
func checkNodeSlice(t *testing.T, ctx context.Context) {
	var before musterv1.NodeSlice
	sliceKey := key(musterv1.MemberNamespace("member1"), "member1-0")
	if err := fleet.Hub.Client.Get(ctx, sliceKey, &before); err != nil {
		t.Fatalf("member1's agent wrote no NodeSlice member1-0: %v", err)
	}
	kubectl(t, ctx, "apply", "--dry-run=server", "-f", samplePath("nodeslice.yaml"))
	var after musterv1.NodeSlice
	if err := fleet.Hub.Client.Get(ctx, sliceKey, &after); err != nil {
		t.Fatal(err)
	}
	if len(after.Nodes) != demoNodes || slices.ContainsFunc(after.Nodes, func(n musterv1.NodeInfo) bool { return n.Unschedulable }) {
		t.Errorf("after the dry run NodeSlice member1-0 holds %d nodes (unschedulable ones among them?), want member1's %d schedulable nodes as the agent wrote them", len(after.Nodes), demoNodes)
	}
}

// fleetjob.yaml: Complete, 20 succeeded, shards on member1 and member2 covering 0-19.
func checkFleetJob(t *testing.T, ctx context.Context) {
	kubectl(t, ctx, "apply", "-f", samplePath("fleetjob.yaml"))
	fj := waitForFleetJob(t, ctx, "render-frames")
	if fj.Status.Succeeded != 20 {
		t.Errorf("render-frames succeeded %d, want 20", fj.Status.Succeeded)
	}
	var clusters, ranges []string
	for _, c := range fj.Status.Clusters {
		clusters = append(clusters, c.ClusterName)
		ranges = append(ranges, c.CompletedIndexes)
	}
	slices.Sort(clusters)
	if !slices.Equal(clusters, []string{"member1", "member2"}) || !coversIndexes(ranges, 20) {
		t.Errorf("render-frames shards on %v with completed indexes %v, want member1 and member2 covering 0-19", clusters, ranges)
	}
	out := musterctl(t, ctx, "describe", "fleetjob", "render-frames")
	if !strings.Contains(out, "member1") || !strings.Contains(out, "member2") {
		t.Errorf("musterctl describe fleetjob render-frames shows no per-cluster rows:\n%s", out)
	}
}

// broadcastjob.yaml: Completed with one pod succeeded on each of the fleet's 6 nodes.
func checkBroadcastJob(t *testing.T, ctx context.Context) {
	kubectl(t, ctx, "apply", "-f", samplePath("broadcastjob.yaml"))
	var job musterv1.BroadcastJob
	waitFor(t, ctx, jobTimeout, "BroadcastJob prefetch-image Completed", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, key(sampleNamespace, "prefetch-image"), &job); err != nil {
			return false, err.Error(), nil
		}
		if job.Status.Phase == musterv1.BroadcastJobFailedPh {
			return false, "", fmt.Errorf("prefetch-image failed: %v", conditionSummary(job.Status.Conditions))
		}
		return job.Status.Phase == musterv1.BroadcastJobCompleted, string(job.Status.Phase), nil
	})
	if job.Status.Desired != demoFleetNodes || job.Status.Succeeded != demoFleetNodes {
		t.Errorf("prefetch-image desired %d succeeded %d, want %d each", job.Status.Desired, job.Status.Succeeded, demoFleetNodes)
	}
	out := musterctl(t, ctx, "get", "broadcastjob", "prefetch-image")
	if !strings.Contains(out, "Completed") {
		t.Errorf("musterctl get broadcastjob prefetch-image does not say Completed:\n%s", out)
	}
}

// workloadspread.yaml: crawl-pages Complete with on-prem@member1 ×3 and cloud@member2 ×2.
func checkWorkloadSpread(t *testing.T, ctx context.Context) {
	kubectl(t, ctx, "apply", "-f", samplePath("workloadspread.yaml"))
	fj := waitForFleetJob(t, ctx, "crawl-pages")
	got := map[string]int32{}
	for _, c := range fj.Status.Clusters {
		if c.Parallelism != nil {
			got[c.Subset+"@"+c.ClusterName] = *c.Parallelism
		}
	}
	want := map[string]int32{"on-prem@member1": 3, "cloud@member2": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("crawl-pages shards %v, want %v", got, want)
	}
}

// fleetcronjob.yaml: a first run created and completed, lastSuccessfulTime set.
func checkFleetCronJob(t *testing.T, ctx context.Context) {
	kubectl(t, ctx, "apply", "-f", samplePath("fleetcronjob.yaml"))
	// The next minute, plus the run itself.
	waitFor(t, ctx, 60*time.Second+jobTimeout, "heartbeat-report's first successful run", func(ctx context.Context) (bool, string, error) {
		var cron musterv1.FleetCronJob
		if err := fleet.Hub.Client.Get(ctx, key(sampleNamespace, "heartbeat-report"), &cron); err != nil {
			return false, err.Error(), nil
		}
		s := cron.Status
		return s.LastScheduleTime != nil && s.LastSuccessfulTime != nil, fmt.Sprintf("lastSchedule %v lastSuccessful %v active %d %v", s.LastScheduleTime, s.LastSuccessfulTime, len(s.Active), conditionSummary(s.Conditions)), nil
	})
	var runs musterv1.FleetJobList
	if err := fleet.Hub.Client.List(ctx, &runs, client.InNamespace(sampleNamespace)); err != nil {
		t.Fatal(err)
	}
	complete := 0
	for _, r := range runs.Items {
		if strings.HasPrefix(r.Name, "heartbeat-report-") && r.Status.Phase == musterv1.JobComplete {
			complete++
		}
	}
	if complete == 0 {
		t.Errorf("no completed FleetJob heartbeat-report-<minute> among %d FleetJobs", len(runs.Items))
	}
}

func waitForFleetJob(t *testing.T, ctx context.Context, name string) *musterv1.FleetJob {
	t.Helper()
	var fj musterv1.FleetJob
	waitFor(t, ctx, jobTimeout, "FleetJob "+name+" Complete", func(ctx context.Context) (bool, string, error) {
		if err := fleet.Hub.Client.Get(ctx, key(sampleNamespace, name), &fj); err != nil {
			return false, err.Error(), nil
		}
		if fj.Status.Phase == musterv1.JobFailed {
			return false, "", fmt.Errorf("%s failed: %v", name, conditionSummary(fj.Status.Conditions))
		}
		return fj.Status.Phase == musterv1.JobComplete, fmt.Sprintf("%s %v", fj.Status.Phase, conditionSummary(fj.Status.Conditions)), nil
	})
	return &fj
}
