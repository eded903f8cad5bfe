package builders_test

import (
	"context"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/work"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/internal/testing/builders"
	"github.com/musterhq/muster/internal/testing/envtest"
)

var env *envtest.Environment

// TestMain runs the builders' tests against a bare API server with Muster's CRDs: what a
// builder makes must be an object the API server stores, its OpenAPI and CEL rules
// included, or a test starting from it would test a case no user can create.
func TestMain(m *testing.M) { os.Exit(envtest.MainWith(m, &env, nil)) }

// create stores obj (with no UID: the API server sets it) and fails the test if the API
// server refuses it.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	obj.SetUID("")
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("the API server refused the built %T: %v", obj, err)
	}
}

// memberNamespace creates the hub namespace of a member cluster named after the test.
func memberNamespace(t *testing.T) string {
	t.Helper()
	cluster := env.Namespace(t)
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.MemberNamespace(cluster)}}); err != nil {
		t.Fatal(err)
	}
	return cluster
}

func TestFleetJobBuilderMakesStorableJobs(t *testing.T) {
	ns := env.Namespace(t)
	create(t, builders.MakeFleetJob("plain", ns).Obj())
	fj := builders.MakeFleetJob("divided", ns).Indexed().Parallelism(4).Completions(8).Mode(musterv1.PlacementDivided).
		ClusterSelector(map[string]string{"zone": "a"}).ShardFailurePolicy(musterv1.ShardContinue).
		Pod(func(p *corev1.PodTemplateSpec) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }).Obj()
	create(t, fj)
	if *fj.Spec.Template.Spec.Completions != 8 || fj.Spec.Placement.Mode != musterv1.PlacementDivided || fj.Spec.Template.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("the builder's settings were not kept: %+v", fj.Spec)
	}
}

func TestBroadcastJobBuilderMakesStorableJobs(t *testing.T) {
	ns := env.Namespace(t)
	create(t, builders.MakeBroadcastJob("plain", ns).Obj())
	b := builders.MakeBroadcastJob("full", ns).Parallelism(intstr.FromString("50%")).Paused(true).
		NodeSelector(map[string]string{"pool": "gpu"}).RestartLimit(2).ActiveDeadlineSeconds(60).Clusters("c1", "c2")
	first := b.Obj()
	first.Spec.Paused = false
	if !b.Obj().Spec.Paused {
		t.Error("Obj shares its object with the builder: changing one copy changed the next")
	}
	create(t, b.Obj())
}

func TestFleetCronJobBuilderMakesStorableCrons(t *testing.T) {
	ns := env.Namespace(t)
	create(t, builders.MakeFleetCronJob("jobs", ns).Schedule("*/5 * * * *").TimeZone("Europe/Paris").
		ConcurrencyPolicy(musterv1.ConcurrencyForbid).StartingDeadlineSeconds(30).Suspend(true).Obj())
	cj := builders.MakeFleetCronJob("broadcasts", ns).Broadcast().Obj()
	create(t, cj)
	if cj.Spec.JobTemplate != nil || cj.Spec.BroadcastJobTemplate == nil {
		t.Errorf("Broadcast left the FleetJob template or made no BroadcastJob one: %+v", cj.Spec)
	}
}

func TestWorkloadSpreadBuilderMakesValidSpreads(t *testing.T) {
	ns := env.Namespace(t)
	ws := builders.MakeWorkloadSpread("spread", ns, "job").Strategy(musterv1.ScheduleAdaptive).
		Subset("a", "60%", "c1").Patch(map[string]any{"metadata": map[string]any{"labels": map[string]string{"zone": "a"}}}).
		Subset("b", "", "c2").Obj()
	if errs := workloadspread.Validate(ws, nil); len(errs) > 0 {
		t.Fatalf("the webhook's rules refuse the built spread: %v", errs.ToAggregate())
	}
	create(t, ws)
}

func TestMemberClusterBuilderMakesStorableClusters(t *testing.T) {
	b := builders.MakeMemberCluster(env.Namespace(t)).Available().Label("zone", "a").
		Taint(corev1.Taint{Key: "gpu", Effect: corev1.TaintEffectNoSchedule})
	stored := b.Obj()
	create(t, stored)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), stored) })
	// The API server drops the status on create; the builder's copy keeps it.
	mc := b.Obj()
	for _, c := range []string{musterv1.MemberClusterAccepted, musterv1.MemberClusterJoined, musterv1.MemberClusterAvailable} {
		if !hasTrue(mc.Status.Conditions, c) {
			t.Errorf("Available left condition %s not True: %+v", c, mc.Status.Conditions)
		}
	}
}

func TestNodeSliceBuilderKeepsNodesSortedAndCounted(t *testing.T) {
	cluster := memberNamespace(t)
	slice := builders.MakeNodeSlice("slice", cluster).Node("n2", "4", "8Gi").Node("n1", "2", "4Gi", func(n *musterv1.NodeInfo) { n.Unschedulable = true }).Obj()
	if slice.NodeCount != 2 || slice.Nodes[0].Name != "n1" || !slice.Nodes[0].Unschedulable {
		t.Fatalf("nodes %+v, count %d: want n1 (cordoned) then n2, count 2", slice.Nodes, slice.NodeCount)
	}
	create(t, slice)
}

func TestWorkBuilderMakesValidWorks(t *testing.T) {
	cluster := memberNamespace(t)
	w := builders.MakeWork("work", cluster).ConfigMap("default", "cm", map[string]string{"k": "v"}).
		DeletePropagation(musterv1.DeletePropagationOrphan).Label("app", "x").
		Feedback(musterv1.ResourceIdentifier{Kind: "ConfigMap", Namespace: "default", Name: "cm", Version: "v1"}, musterv1.FeedbackJSONPaths,
			musterv1.JSONPathRule{Name: "k", Path: ".data.k"}).Obj()
	if errs := work.Validate(w); len(errs) > 0 {
		t.Fatalf("the webhook's rules refuse the built Work: %v", errs.ToAggregate())
	}
	create(t, w)
}

func hasTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == metav1.ConditionTrue {
			return true
		}
	}
	return false
}
