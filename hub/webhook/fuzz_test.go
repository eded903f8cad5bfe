package webhook

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/work"
	"github.com/musterhq/muster/api/workloadspread"
	"github.com/musterhq/muster/internal/testing/builders"
)

// The validators' fuzz targets check the webhook's own judgement on hostile objects: it
// never panics, judges one object the same twice, refuses with the user's error (Invalid),
// never an internal one, and what it admits keeps the promises of its doc comment. The API
// server is played by fuzzAPI, which accepts every dry-run: the templates' validation is
// the API server's (tested in the envtest suite), not the webhook's.

// fuzzAPI is the API server of the fuzzed validators: every namespace has labels, it
// lists spreads, has no FleetJob, and accepts every dry-run create. Any other call
// reaches the nil Client and panics, failing the fuzz: the validators make no others.
type fuzzAPI struct {
	client.Client
	labels  map[string]string
	spreads []musterv1.WorkloadSpread
}

func (a fuzzAPI) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if ns, ok := obj.(*corev1.Namespace); ok {
		ns.Name, ns.Labels = key.Name, maps.Clone(a.labels)
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Group: musterv1.GroupVersion.Group, Resource: "fleetjobs"}, key.Name)
}

func (a fuzzAPI) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	if l, ok := list.(*musterv1.WorkloadSpreadList); ok {
		for _, s := range a.spreads {
			l.Items = append(l.Items, *s.DeepCopy())
		}
	}
	return nil
}

func (fuzzAPI) Create(context.Context, client.Object, ...client.CreateOption) error { return nil }

var fuzzReserved = slices.Concat(DefaultReservedNamespaces, []string{musterv1.HubNamespace})

// fuzzEvaluator is made once: making one takes longer than judging an object.
var fuzzEvaluator = sync.OnceValues(func() (podSecurity, error) { return newPodSecurity(nil, nil, "") })

// fuzzTenancy is the webhook's tenancy over api, with the default reserved namespaces.
func fuzzTenancy(t *testing.T, api fuzzAPI) (tenancy, dryRun) {
	t.Helper()
	psa, err := fuzzEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	psa.cache, psa.api = api, api
	return tenancy{reserved: fuzzReserved, podSecurity: psa}, dryRun{client: api, namespace: musterv1.HubNamespace}
}

// verdict is what a validator answered, comparable.
type verdict struct {
	warnings string
	err      string
}

func verdictOf(t *testing.T, warnings admission.Warnings, err error) verdict {
	t.Helper()
	if err != nil && !apierrors.IsInvalid(err) {
		t.Fatalf("refused with %v, not as invalid", err)
	}
	v := verdict{warnings: strings.Join(warnings, "\n")}
	if err != nil {
		v.err = err.Error()
	}
	return v
}

// judgeTwice runs judge twice and fails when the answers differ; it returns the answer.
func judgeTwice(t *testing.T, judge func() (admission.Warnings, error)) verdict {
	t.Helper()
	w, err := judge()
	first := verdictOf(t, w, err)
	w, err = judge()
	if again := verdictOf(t, w, err); again != first {
		t.Fatalf("judged twice differently: %+v, then %+v", first, again)
	}
	return first
}

// fuzzPod is a pod template a fuzzer shapes: its image, and whether it asks for what
// the baseline Pod Security level forbids.
func fuzzPod(image string, privileged, hostNetwork bool) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		HostNetwork:   hostNetwork,
		Containers:    []corev1.Container{{Name: "main", Image: image, SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(privileged)}}},
	}}
}

// expectTenancy checks what the pod-running validators promise about a namespace's
// tenancy: nothing is admitted in a reserved namespace; a pod that breaks baseline is not
// admitted where the enforce level is baseline or restricted; and, the dry-run accepting
// everything, all else is admitted in a privileged namespace.
func expectTenancy(t *testing.T, v verdict, namespace, enforce string, breaksBaseline bool) {
	t.Helper()
	admitted := v.err == ""
	reserved := reservedBy(namespace, fuzzReserved) != ""
	switch {
	case admitted && reserved:
		t.Fatalf("admitted in reserved namespace %q", namespace)
	case admitted && breaksBaseline && (enforce == string(psaapi.LevelBaseline) || enforce == string(psaapi.LevelRestricted)):
		t.Fatalf("a privileged pod admitted at enforce level %s", enforce)
	case !admitted && !reserved && enforce == string(psaapi.LevelPrivileged):
		t.Fatalf("refused in privileged namespace %q: %s", namespace, v.err)
	}
}

func FuzzFleetJobValidator(f *testing.F) {
	f.Add("team-a", "baseline", "busybox", false, false)
	f.Add("team-a", "baseline", "busybox", true, false)
	f.Add("kube-system", "privileged", "busybox", true, true)
	f.Add("muster-member-c1", "", "", false, false)
	f.Add("team-b", "privileged", "nginx:1.0", true, true)
	f.Add("team-c", "nonsense", "x", false, true)
	f.Fuzz(func(t *testing.T, namespace, enforce, image string, privileged, hostNetwork bool) {
		api := fuzzAPI{labels: map[string]string{psaapi.EnforceLevelLabel: enforce}}
		ten, dry := fuzzTenancy(t, api)
		v := fleetJobValidator{dryRun: dry, reader: api, tenancy: ten}
		fj := builders.MakeFleetJob("fj", namespace).Pod(func(p *corev1.PodTemplateSpec) { *p = fuzzPod(image, privileged, hostNetwork) }).Obj()
		got := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateCreate(t.Context(), fj.DeepCopy()) })
		expectTenancy(t, got, namespace, enforce, privileged || hostNetwork)
		// An update that keeps the template is refused only for its namespace.
		relabelled := fj.DeepCopy()
		relabelled.Labels = map[string]string{"touched": "yes"}
		kept := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateUpdate(t.Context(), fj, relabelled) })
		if (kept.err == "") != (reservedBy(namespace, fuzzReserved) == "") {
			t.Fatalf("update keeping the template judged %+v in namespace %q", kept, namespace)
		}
	})
}

func FuzzBroadcastJobValidator(f *testing.F) {
	f.Add("team-a", "restricted", "busybox", false, false)
	f.Add("team-a", "baseline", "busybox", false, true)
	f.Add("muster-agent", "privileged", "busybox", false, false)
	f.Add("team-b", "privileged", "", true, true)
	f.Fuzz(func(t *testing.T, namespace, enforce, image string, privileged, hostNetwork bool) {
		api := fuzzAPI{labels: map[string]string{psaapi.EnforceLevelLabel: enforce}}
		ten, dry := fuzzTenancy(t, api)
		v := broadcastJobValidator{dryRun: dry, tenancy: ten}
		bj := builders.MakeBroadcastJob("bj", namespace).Obj()
		bj.Spec.Template = fuzzPod(image, privileged, hostNetwork)
		got := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateCreate(t.Context(), bj.DeepCopy()) })
		expectTenancy(t, got, namespace, enforce, privileged || hostNetwork)
		paused := bj.DeepCopy()
		paused.Spec.Paused = true
		kept := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateUpdate(t.Context(), bj, paused) })
		if (kept.err == "") != (reservedBy(namespace, fuzzReserved) == "") {
			t.Fatalf("update keeping the template judged %+v in namespace %q", kept, namespace)
		}
	})
}

func FuzzFleetCronJobValidator(f *testing.F) {
	f.Add("team-a", "*/5 * * * *", "", false)
	f.Add("team-a", "0 0 30 2 *", "Local", true)
	f.Add("team-a", "@hourly", "Europe/Paris", false)
	f.Add("team-a", "* * * * * *", "Mars/Olympus", true)
	f.Add("kube-public", "@daily", "UTC", false)
	f.Add("team-a", "TZ=UTC 0 * * * *", "", true)
	f.Fuzz(func(t *testing.T, namespace, schedule, timeZone string, broadcast bool) {
		api := fuzzAPI{labels: map[string]string{psaapi.EnforceLevelLabel: string(psaapi.LevelPrivileged)}}
		ten, dry := fuzzTenancy(t, api)
		v := fleetCronJobValidator{dryRun: dry, now: func() time.Time { return time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC) }, tenancy: ten}
		cj := &musterv1.FleetCronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: namespace}, Spec: musterv1.FleetCronJobSpec{Schedule: schedule}}
		if timeZone != "" {
			cj.Spec.TimeZone = ptr.To(timeZone)
		}
		if broadcast {
			cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: musterv1.BroadcastJobSpec{Template: fuzzPod("busybox", false, false)}}
		} else {
			cj.Spec.JobTemplate = &musterv1.FleetJobTemplateSpec{}
			cj.Spec.JobTemplate.Spec.Template.Spec.Template = fuzzPod("busybox", false, false)
		}
		got := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateCreate(t.Context(), cj.DeepCopy()) })
		reserved := reservedBy(namespace, fuzzReserved) != ""
		if got.err == "" {
			if reserved {
				t.Fatalf("admitted in reserved namespace %q", namespace)
			}
			// An admitted cron is one the controller can schedule.
			if errs, err := scheduleErrors(cj); err != nil || len(errs) > 0 {
				t.Fatalf("admitted schedule %q in time zone %q does not parse: %v %v", schedule, timeZone, errs, err)
			}
		}
		// Suspending keeps the schedule and templates: only the namespace is judged.
		suspended := cj.DeepCopy()
		suspended.Spec.Suspend = ptr.To(true)
		kept := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateUpdate(t.Context(), cj, suspended) })
		if (kept.err == "") == reserved {
			t.Fatalf("suspending judged %+v in namespace %q", kept, namespace)
		}
	})
}

func FuzzWorkValidator(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x"}}`), []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"x"}}`), "ConfigMap", ".data.k")
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`), []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"}}`), "Deployment", "{.status.readyReplicas}")
	f.Add([]byte(`[`), []byte(`{}`), "", "{{")
	f.Add([]byte(`{"kind":7}`), []byte(`null`), "x", "..")
	f.Fuzz(func(t *testing.T, first, second []byte, kind, path string) {
		w := builders.MakeWork("w", "c1").Obj()
		w.Spec.Manifests = []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: first}}, {RawExtension: runtime.RawExtension{Raw: second}}}
		w.Spec.FeedbackRules = []musterv1.FeedbackRule{{
			Resource: musterv1.ResourceIdentifier{Kind: kind, Name: "a"}, Mode: musterv1.FeedbackJSONPaths,
			JSONPaths: []musterv1.JSONPathRule{{Name: "p", Path: path}},
		}}
		got := judgeTwice(t, func() (admission.Warnings, error) { return workValidator{}.ValidateCreate(t.Context(), w.DeepCopy()) })
		if (got.err == "") != (len(work.Validate(w)) == 0) {
			t.Fatalf("judged %+v, but the rules of api/work say %v", got, work.Validate(w))
		}
		// A Work whose spec is kept (its finalizer removed) is never refused.
		done := w.DeepCopy()
		done.Finalizers = []string{"x"}
		if kept := judgeTwice(t, func() (admission.Warnings, error) { return workValidator{}.ValidateUpdate(t.Context(), w, done) }); kept.err != "" {
			t.Fatalf("an update keeping the spec was refused: %s", kept.err)
		}
	})
}

func FuzzWorkloadSpreadValidator(f *testing.F) {
	f.Add("team-a", "job", "other", "50%", "", []byte(`{"metadata":{"labels":{"a":"b"}}}`))
	f.Add("team-a", "job", "job", "3", "4", []byte(`{}`))
	f.Add("muster-system", "job", "", "", "", []byte(nil))
	f.Add("team-a", "", "x", "101%", "-1", []byte(`{"spec":{"containers":"x"}}`))
	f.Add("team-a", "job", "y", "60%", "50%", []byte(`[`))
	f.Fuzz(func(t *testing.T, namespace, target, otherTarget, max1, max2 string, patch []byte) {
		other := builders.MakeWorkloadSpread("other", namespace, otherTarget).Subset("all", "", "c1").Obj()
		api := fuzzAPI{spreads: []musterv1.WorkloadSpread{*other}}
		ten, dry := fuzzTenancy(t, api)
		v := workloadSpreadValidator{reader: api, dryRun: dry, tenancy: ten}
		ws := builders.MakeWorkloadSpread("ws", namespace, target).Obj()
		a := musterv1.WorkloadSpreadSubset{Name: "a", ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"c1"}}, Patch: &runtime.RawExtension{Raw: patch}}
		b := musterv1.WorkloadSpreadSubset{Name: "b", ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"c2"}}}
		if max1 != "" {
			a.MaxReplicas = ptr.To(intstr.Parse(max1))
		}
		if max2 != "" {
			b.MaxReplicas = ptr.To(intstr.Parse(max2))
		}
		ws.Spec.Subsets = []musterv1.WorkloadSpreadSubset{a, b}
		got := judgeTwice(t, func() (admission.Warnings, error) { return v.ValidateCreate(t.Context(), ws.DeepCopy()) })
		if got.err != "" {
			return
		}
		// An admitted spread is outside the reserved namespaces, keeps the rules of
		// api/workloadspread, and is the only one of its target.
		if reservedBy(namespace, fuzzReserved) != "" {
			t.Fatalf("admitted in reserved namespace %q", namespace)
		}
		if errs := workloadspread.Validate(ws, api.spreads); len(errs) > 0 {
			t.Fatalf("admitted a spread that breaks the rules: %v", errs.ToAggregate())
		}
		if target == otherTarget {
			t.Fatalf("admitted a second spread of FleetJob %q", target)
		}
	})
}
