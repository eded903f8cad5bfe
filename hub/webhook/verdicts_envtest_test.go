package webhook_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// A template the webhook saw pass a moment ago is not dry-run again: neither a second
// FleetJob of the same template and a name of the same shape, nor a FleetCronJob's run,
// whose template the cron's own admission dry-ran. A template that differs, or a name
// that does not fit where the first did, is dry-run and refused as before, and Pod
// Security is checked on every object: a namespace made stricter refuses the next one.
func TestATemplateThatPassedIsNotDryRunAgain(t *testing.T) {
	ns := levelNamespace(t, "verdicts", nil)
	// An image of this test's own: other tests' templates passed a moment ago too.
	ownImage := func(fj *fleetJobT) { fj.Spec.Template.Spec.Template.Spec.Containers[0].Image = "busybox:verdicts" }
	first := fleetJob("first-aa", ns, ownImage)
	expectAdmitted(t, first)
	expectDryRun(t, first.Name)

	t.Run("the same template under a name of the same shape", func(t *testing.T) {
		again := fleetJob("again-bb", ns, ownImage)
		expectAdmitted(t, again)
		expectNoDryRun(t, ns, again.Name)
	})
	t.Run("a FleetCronJob's run", func(t *testing.T) {
		cj := cronJob("nightly", ns, nil, nil)
		expectAdmitted(t, cj)
		// A slot an hour on: the cron's own dry-run used the name of the current one.
		slot := time.Now().Add(time.Hour).Truncate(time.Minute)
		run := &musterv1.FleetJob{
			ObjectMeta: metav1.ObjectMeta{
				Name: cronapi.ChildName(cj, slot), Namespace: ns,
				Annotations:     map[string]string{musterv1.ScheduledTimeAnnotation: slot.UTC().Format(time.RFC3339)},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, musterv1.GroupVersion.WithKind("FleetCronJob"))},
			},
			Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
		}
		expectAdmitted(t, run)
		expectNoDryRun(t, ns, run.Name)
	})
	t.Run("a bad template under the same name shape is refused", func(t *testing.T) {
		expectRefused(t, fleetJob("worse-cc", ns, func(fj *fleetJobT) { fj.Spec.Template.Spec.Parallelism = ptrTo[int32](-1) }),
			[]refusal{{"spec.template.spec.parallelism", "Invalid value: -1: must be greater than or equal to 0"}})
	})
	t.Run("a name too long for the pods' host names is refused after a shorter one passed", func(t *testing.T) {
		indexed := func(fj *fleetJobT) {
			fj.Spec.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
			fj.Spec.Template.Spec.Completions = ptrTo[int32](10)
		}
		expectAdmitted(t, fleetJob(strings.Repeat("s", 50), ns, indexed))
		long := strings.Repeat("l", 63)
		expectRefused(t, fleetJob(long, ns, indexed), []refusal{{"metadata.name", `Invalid value: "` + long + `": will not able to create pod with invalid DNS label: ` + long + "-9"}})
	})
	t.Run("Pod Security is checked on every object", func(t *testing.T) {
		var namespace corev1.Namespace
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: ns}, &namespace); err != nil {
			t.Fatal(err)
		}
		namespace.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
		if err := env.Client.Update(t.Context(), &namespace); err != nil {
			t.Fatal(err)
		}
		attempt := 0
		envtest.Eventually(t, "the same template refused for Pod Security", func() (bool, string) {
			attempt++
			err := env.Client.Create(t.Context(), fleetJob(fmt.Sprintf("psa-%03d", attempt), ns, nil))
			return err != nil && strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`), fmt.Sprint(err)
		})
	})
}

// expectDryRun waits until the audit log holds the dry-run of the FleetJob name.
func expectDryRun(t *testing.T, name string) {
	t.Helper()
	envtest.Eventually(t, "the dry-run of "+name+" in the audit log", func() (bool, string) {
		seen, err := dryRunAudited(name)
		return seen, fmt.Sprint(err)
	})
}

// expectNoDryRun checks that the FleetJob name, created a moment ago in ns, was admitted
// without a dry-run: a FleetJob of another image created after it must be dry-run, and
// once its dry-run is in the audit log, one of name would be too.
func expectNoDryRun(t *testing.T, ns, name string) {
	t.Helper()
	control := fleetJob("control-"+name, ns, func(fj *fleetJobT) {
		fj.Spec.Template.Spec.Template.Spec.Containers[0].Image = "busybox:" + strings.ReplaceAll(name, "-", ".")
	})
	expectAdmitted(t, control)
	expectDryRun(t, control.Name)
	ran, err := dryRunAudited(name)
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Errorf("%s was dry-run, though its template passed a moment before", name)
	}
}

// dryRunAudited says whether the audit log holds the hub's dry-run create of a Job named
// name in the hub's namespace: the check of a FleetJob of that name.
func dryRunAudited(name string) (bool, error) {
	ev, err := findAuditEvent(func(ev auditEvent) bool {
		return ev.Verb == "create" && ev.ObjectRef.Resource == "jobs" && ev.ObjectRef.Namespace == hubNamespace && ev.ObjectRef.Name == name
	})
	return ev != nil, err
}
