package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/cmd/musterctl/app/dashboard"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain starts a real API server with Muster's CRDs and no controllers: the tests write
// the hub's objects and their status themselves, as the hub would.
func TestMain(m *testing.M) {
	os.Exit(envtest.Main(m, &env, func(ctrl.Manager) error { return nil }))
}

// startDashboard serves the dashboard of the test API server on a free port until the test
// ends, and returns its address.
func startDashboard(t *testing.T) string { return startDashboardIn(t, "") }

// startDashboardIn serves the dashboard of one namespace's jobs ("" for all) for the test.
func startDashboardIn(t *testing.T, namespace string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := dashboard.Start(ctx, env.Config, namespace)
	if err != nil {
		cancel()
		ln.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("dashboard: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// get fetches url and returns its body, failing the test unless it answers 200.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body)
}

// demo is a small fleet as the hub reports it: two member clusters, a FleetJob divided
// over both, a BroadcastJob on both and a FleetCronJob, each with the status the hub's
// controllers would write. Cluster names carry the namespace: clusters are cluster-scoped
// and the tests share one API server.
type demo struct {
	ns, member1, member2 string
	fleetJob             *musterv1.FleetJob
	broadcastJob         *musterv1.BroadcastJob
	cron                 *musterv1.FleetCronJob
}

func newDemo(t *testing.T) *demo {
	t.Helper()
	ns := env.Namespace(t)
	d := &demo{ns: ns, member1: ns + "-member1", member2: ns + "-member2"}
	d.cluster(t, d.member1, nil)
	d.cluster(t, d.member2, []corev1.Taint{{Key: "maintenance", Value: "kernel", Effect: corev1.TaintEffectNoSchedule}})
	d.fleetJob = &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "render-frames", Namespace: ns},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided},
			Template:  batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Completions: ptr.To[int32](20), Template: podTemplate()}},
		},
	}
	create(t, d.fleetJob, func() {
		d.fleetJob.Status = musterv1.FleetJobStatus{Phase: musterv1.JobRunning, Active: 4, Succeeded: 7, Clusters: []musterv1.ClusterJobStatus{
			{ClusterName: d.member1, Completions: ptr.To[int32](10), Phase: musterv1.JobRunning, Active: 2, Succeeded: 4},
			{ClusterName: d.member2, Completions: ptr.To[int32](10), Phase: musterv1.JobRunning, Active: 2, Succeeded: 3},
		}}
	})
	d.broadcastJob = &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: "prefetch-image", Namespace: ns},
		Spec:       musterv1.BroadcastJobSpec{Template: podTemplate(), Placement: &musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{d.member1, d.member2}}}},
	}
	create(t, d.broadcastJob, func() {
		d.broadcastJob.Status = musterv1.BroadcastJobStatus{Phase: musterv1.BroadcastJobCompleted,
			BroadcastCounts: musterv1.BroadcastCounts{Desired: 6, Succeeded: 6},
			Clusters: []musterv1.ClusterBroadcastStatus{
				{ClusterName: d.member1, Phase: musterv1.BroadcastJobCompleted, BroadcastCounts: musterv1.BroadcastCounts{Desired: 3, Succeeded: 3}},
				{ClusterName: d.member2, Phase: musterv1.BroadcastJobCompleted, BroadcastCounts: musterv1.BroadcastCounts{Desired: 3, Succeeded: 3}},
			}}
	})
	d.cron = &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-report", Namespace: ns},
		Spec: musterv1.FleetCronJobSpec{Schedule: "30 2 * * *", TimeZone: ptr.To("Europe/Berlin"),
			JobTemplate: &musterv1.FleetJobTemplateSpec{Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podTemplate()}}}}},
	}
	create(t, d.cron, func() {
		last := metav1.NewTime(time.Now().Add(-3 * time.Hour).Truncate(time.Second))
		d.cron.Status = musterv1.FleetCronJobStatus{LastScheduleTime: &last}
	})
	return d
}

func (d *demo) cluster(t *testing.T, name string, taints []corev1.Taint) {
	t.Helper()
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: musterv1.MemberClusterSpec{Accepted: true, Taints: taints}}
	create(t, mc, func() {
		mc.Status = musterv1.MemberClusterStatus{Version: "v1.36.3", Nodes: &musterv1.NodeCounts{Total: 3, Ready: 3, Schedulable: 3},
			Conditions: []metav1.Condition{{Type: musterv1.MemberClusterAvailable, Status: metav1.ConditionTrue, Reason: "HeartbeatReceived", Message: "the agent renewed its lease", LastTransitionTime: metav1.Now()}}}
	})
	t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), mc); err != nil {
			t.Errorf("deleting cluster %s: %v", name, err)
		}
	})
}

// create creates obj, then sets its status with setStatus and writes it, as a controller
// would after the user's create.
func create(t *testing.T, obj client.Object, setStatus func()) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	setStatus()
	if err := env.Client.Status().Update(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}

func podTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"true"}}}}}
}

// element returns the HTML from the start tag that carries attr (such as
// `data-cluster="m1"`) to the end tag that closes it, or an error saying what the page
// held instead. The dashboard's markup nests no element in one of its own name.
func element(page, tag, attr string) (string, error) {
	i := strings.Index(page, attr)
	if i < 0 {
		return "", fmt.Errorf("no element with %s in the page", attr)
	}
	start := strings.LastIndex(page[:i], "<"+tag)
	end := strings.Index(page[i:], "</"+tag+">")
	if start < 0 || end < 0 {
		return "", errors.New("no <" + tag + "> around " + attr)
	}
	return page[start : i+end+len("</"+tag+">")], nil
}

// text is the text of an HTML fragment: tags dropped, spaces collapsed.
func text(fragment string) string {
	var b strings.Builder
	inTag := false
	for _, r := range fragment {
		switch {
		case r == '<':
			inTag = true
			b.WriteRune(' ')
		case r == '>':
			inTag = false
		case !inTag:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
