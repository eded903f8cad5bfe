package webhook_test

import (
	"errors"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

type fleetJobT = musterv1.FleetJob

func ptrTo[T any](v T) *T { return &v }

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
	}
}

func fleetJob(name, ns string, change func(*musterv1.FleetJob)) *musterv1.FleetJob {
	fj := &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptrTo[int32](2), Completions: ptrTo[int32](4),
			Template: corev1.PodTemplateSpec{Spec: podSpec()},
		}}},
	}
	if change != nil {
		change(fj)
	}
	return fj
}

func broadcastJob(name, ns string, change func(*corev1.PodSpec)) *musterv1.BroadcastJob {
	job := &musterv1.BroadcastJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: musterv1.BroadcastJobSpec{
			Template:  corev1.PodTemplateSpec{Spec: podSpec()},
			Placement: &musterv1.Placement{},
		},
	}
	if change != nil {
		change(&job.Spec.Template.Spec)
	}
	return job
}

func cronJob(name, ns string, jobs func(*musterv1.FleetJobSpec), pods func(*corev1.PodSpec)) *musterv1.FleetCronJob {
	cj := &musterv1.FleetCronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       musterv1.FleetCronJobSpec{Schedule: "*/5 * * * *"},
	}
	if pods != nil {
		bcj := broadcastJob(name, ns, pods)
		cj.Spec.BroadcastJobTemplate = &musterv1.BroadcastJobTemplateSpec{Spec: bcj.Spec}
		return cj
	}
	fj := fleetJob(name, ns, nil)
	if jobs != nil {
		jobs(&fj.Spec)
	}
	cj.Spec.JobTemplate = &musterv1.FleetJobTemplateSpec{Spec: fj.Spec}
	return cj
}

// refusal is what a user sees for one bad field: the field of their object and the API
// server's message for it.
type refusal struct {
	field, message string
}

// expectRefused creates obj and checks that it is refused as Invalid with exactly want.
func expectRefused(t *testing.T, obj client.Object, want []refusal) {
	t.Helper()
	err := env.Client.Create(t.Context(), obj)
	if err == nil {
		t.Fatalf("the hub admitted the object; want it refused with %v", want)
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error = %v, want an Invalid error with causes", err)
	}
	var got []refusal
	for _, c := range status.Status().Details.Causes {
		got = append(got, refusal{c.Field, c.Message})
	}
	if len(got) != len(want) {
		t.Fatalf("causes = %q, want %q\nerror: %v", got, want, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("cause %d = %q, want %q", i, got[i], want[i])
		}
	}
	if !strings.Contains(err.Error(), want[0].field+": "+want[0].message) {
		t.Errorf("error = %v, want it to say %s: %s", err, want[0].field, want[0].message)
	}
}

func expectAdmitted(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(t.Context(), obj); err != nil {
		t.Fatalf("the hub refused a valid object: %v", err)
	}
}

func TestFleetJobTemplates(t *testing.T) {
	ns := env.Namespace(t)
	jobSpec := "spec.template.spec."
	podField := jobSpec + "template.spec."
	tests := []struct {
		name   string
		fjName string
		change func(*musterv1.FleetJob)
		want   []refusal
	}{
		{name: "negative parallelism", change: func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptrTo[int32](-1) },
			want: []refusal{{jobSpec + "parallelism", "Invalid value: -1: must be greater than or equal to 0"}}},
		{name: "negative completions", change: func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Completions = ptrTo[int32](-3) },
			want: []refusal{{jobSpec + "completions", "Invalid value: -3: must be greater than or equal to 0"}}},
		{name: "no containers", change: func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Template.Spec.Containers = []corev1.Container{} },
			want: []refusal{{podField + "containers", "Required value"}}},
		{name: "negative backoffLimit", change: func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.BackoffLimit = ptrTo[int32](-1) },
			want: []refusal{{jobSpec + "backoffLimit", "Invalid value: -1: must be greater than or equal to 0"}}},
		{name: "negative activeDeadlineSeconds", change: func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.ActiveDeadlineSeconds = ptrTo[int64](-5) },
			want: []refusal{{jobSpec + "activeDeadlineSeconds", "Invalid value: -5: must be greater than or equal to 0"}}},
		{name: "container name not a DNS label", change: func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Template.Spec.Containers[0].Name = "Bad_Name" },
			want: []refusal{{podField + "containers[0].name", `Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}}},
		{name: "podFailurePolicy with OnFailure", change: func(fj *musterv1.FleetJob) {
			fj.Spec.Template.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			fj.Spec.Template.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
			}}}
		}, want: []refusal{{podField + "restartPolicy", `Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified`}}},
		{name: "Indexed pod host names too long", fjName: strings.Repeat("a", 63), change: func(fj *musterv1.FleetJob) {
			fj.Spec.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
			fj.Spec.Template.Spec.Completions = ptrTo[int32](10)
		}, want: []refusal{{"metadata.name", `Invalid value: "` + strings.Repeat("a", 63) + `": will not able to create pod with invalid DNS label: ` + strings.Repeat("a", 63) + "-9"}}},
		{name: "Indexed parallelism over 100000", change: func(fj *musterv1.FleetJob) {
			fj.Spec.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
			fj.Spec.Template.Spec.Completions = ptrTo[int32](200000)
			fj.Spec.Template.Spec.Parallelism = ptrTo[int32](100001)
		}, want: []refusal{{jobSpec + "parallelism", "Invalid value: 100001: must be less than or equal to 100000 when completion mode is Indexed"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.fjName
			if name == "" {
				name = "job"
			}
			expectRefused(t, fleetJob(name, ns, tc.change), tc.want)
		})
	}
}

func TestValidFleetJobsAreAdmitted(t *testing.T) {
	ns := env.Namespace(t)
	expectAdmitted(t, fleetJob("plain", ns, nil))
	// As the built-in Job, parallelism 0 is valid: the job runs nothing until raised.
	expectAdmitted(t, fleetJob("paused", ns, func(fj *musterv1.FleetJob) { fj.Spec.Template.Spec.Parallelism = ptrTo[int32](0) }))
	// Upstream admits Indexed completions up to the int32 maximum.
	expectAdmitted(t, fleetJob("huge", ns, func(fj *musterv1.FleetJob) {
		fj.Spec.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
		fj.Spec.Template.Spec.Completions = ptrTo[int32](2147483647)
		fj.Spec.Template.Spec.Parallelism = ptrTo[int32](100000)
	}))
	// 61 characters and index 9: the longest host name, 63, is a DNS label.
	expectAdmitted(t, fleetJob(strings.Repeat("b", 61), ns, func(fj *musterv1.FleetJob) {
		fj.Spec.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
		fj.Spec.Template.Spec.Completions = ptrTo[int32](10)
	}))
}

func TestFleetJobTemplateChecksRunOnUpdate(t *testing.T) {
	ns := env.Namespace(t)
	fj := fleetJob("job", ns, nil)
	expectAdmitted(t, fj)
	fj.Spec.Template.Spec.Template.Spec.Containers[0].Name = "Bad_Name"
	err := env.Client.Update(t.Context(), fj)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.spec.template.spec.containers[0].name") {
		t.Fatalf("update error = %v, want the container name refused", err)
	}
}

func TestBroadcastJobTemplates(t *testing.T) {
	ns := env.Namespace(t)
	tests := []struct {
		name   string
		change func(*corev1.PodSpec)
		want   []refusal
	}{
		{name: "no containers", change: func(s *corev1.PodSpec) { s.Containers = []corev1.Container{} },
			want: []refusal{{"spec.template.spec.containers", "Required value"}}},
		{name: "container name not a DNS label", change: func(s *corev1.PodSpec) { s.Containers[0].Name = "Bad_Name" },
			want: []refusal{{"spec.template.spec.containers[0].name", `Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}}},
		{name: "negative activeDeadlineSeconds", change: func(s *corev1.PodSpec) { s.ActiveDeadlineSeconds = ptrTo[int64](-5) },
			want: []refusal{{"spec.template.spec.activeDeadlineSeconds", "Invalid value: -5: must be between 1 and 2147483647, inclusive"}}},
		{name: "two containers with one name", change: func(s *corev1.PodSpec) { s.Containers = append(s.Containers, s.Containers[0]) },
			want: []refusal{{"spec.template.spec.containers[1]", `Duplicate value: {"name":"main"}`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectRefused(t, broadcastJob("job", ns, tc.change), tc.want)
		})
	}
	t.Run("valid", func(t *testing.T) { expectAdmitted(t, broadcastJob("job", ns, nil)) })
}

func TestFleetCronJobTemplates(t *testing.T) {
	ns := env.Namespace(t)
	tests := []struct {
		name   string
		cjName string
		jobs   func(*musterv1.FleetJobSpec)
		pods   func(*corev1.PodSpec)
		want   []refusal
	}{
		{name: "job template with negative parallelism", jobs: func(s *musterv1.FleetJobSpec) { s.Template.Spec.Parallelism = ptrTo[int32](-1) },
			want: []refusal{{"spec.jobTemplate.spec.template.spec.parallelism", "Invalid value: -1: must be greater than or equal to 0"}}},
		{name: "job template without containers", jobs: func(s *musterv1.FleetJobSpec) { s.Template.Spec.Template.Spec.Containers = []corev1.Container{} },
			want: []refusal{{"spec.jobTemplate.spec.template.spec.template.spec.containers", "Required value"}}},
		{name: "broadcast template with a bad container name", pods: func(s *corev1.PodSpec) { s.Containers[0].Name = "Bad_Name" },
			want: []refusal{{"spec.broadcastJobTemplate.spec.template.spec.containers[0].name", `Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			expectRefused(t, cronJob("cron", ns, tc.jobs, tc.pods), tc.want)
		})
	}
	t.Run("Indexed children whose pod host names are too long", func(t *testing.T) {
		name := strings.Repeat("c", 52)
		cj := cronJob(name, ns, func(s *musterv1.FleetJobSpec) {
			s.Template.Spec.CompletionMode = ptrTo(batchv1.IndexedCompletion)
			s.Template.Spec.Completions = ptrTo[int32](1000)
		}, nil)
		err := env.Client.Create(t.Context(), cj)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.name: Invalid value: \""+name+"-") ||
			!strings.Contains(err.Error(), "will not able to create pod with invalid DNS label: "+name+"-") {
			t.Fatalf("error = %v, want the child's name refused", err)
		}
	})
	t.Run("valid job template", func(t *testing.T) { expectAdmitted(t, cronJob("jobs", ns, nil, nil)) })
	t.Run("valid broadcast template", func(t *testing.T) {
		expectAdmitted(t, cronJob("pods", ns, nil, func(*corev1.PodSpec) {}))
	})
	t.Run("schedule and template errors together", func(t *testing.T) {
		cj := cronJob("both", ns, func(s *musterv1.FleetJobSpec) { s.Template.Spec.Completions = ptrTo[int32](-3) }, nil)
		cj.Spec.Schedule = "not a schedule"
		err := env.Client.Create(t.Context(), cj)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.schedule: Invalid value") ||
			!strings.Contains(err.Error(), "spec.jobTemplate.spec.template.spec.completions: Invalid value: -3") {
			t.Fatalf("error = %v, want both the schedule and the completions refused", err)
		}
	})
}

func TestWorkWithTwoManifestsForOneObjectIsRefused(t *testing.T) {
	ns := env.Namespace(t)
	cm := func(value string) musterv1.Manifest {
		obj := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}, Data: map[string]string{"v": value}}
		return musterv1.Manifest{RawExtension: runtime.RawExtension{Object: obj}}
	}
	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "dup", Namespace: ns},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{cm("a"), cm("b")}}}
	err := env.Client.Create(t.Context(), w)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.manifests[1]") {
		t.Fatalf("error = %v, want the second manifest refused", err)
	}
	w.Spec.Manifests = w.Spec.Manifests[:1]
	expectAdmitted(t, w)
}

// TestOnlySpecWritesCallTheWebhook: the API server sends an update to the hub only when it
// changes the spec, so agents and the garbage collector can change metadata (finalizers,
// labels) of Muster objects while the hub is down, and the validators' rule that an
// unchanged spec is not checked again lets objects stored before a rule change be updated.
func TestOnlySpecWritesCallTheWebhook(t *testing.T) {
	ns := env.Namespace(t)
	cm := func(value string) musterv1.Manifest {
		obj := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}, Data: map[string]string{"v": value}}
		return musterv1.Manifest{RawExtension: runtime.RawExtension{Object: obj}}
	}
	stored := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "stored-before", Namespace: ns},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{cm("a"), cm("b")}}}
	withoutWebhook(t, func() error { return env.Client.Create(t.Context(), stored) })
	stored.Labels = map[string]string{"touched": "yes"}
	if err := env.Client.Update(t.Context(), stored); err != nil {
		t.Fatalf("a metadata update of a Work stored before the webhook was refused: %v", err)
	}

	w := &musterv1.Work{ObjectMeta: metav1.ObjectMeta{Name: "hub-down", Namespace: ns},
		Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{cm("a")}}}
	expectAdmitted(t, w)
	withHubDown(t, func() {
		w.Finalizers = []string{"muster.dev/test"}
		if err := env.Client.Update(t.Context(), w); err != nil {
			t.Fatalf("adding a finalizer while the hub is down: %v", err)
		}
		w.Finalizers = nil
		if err := env.Client.Update(t.Context(), w); err != nil {
			t.Fatalf("removing a finalizer while the hub is down: %v", err)
		}
		w.Spec.Manifests = append(w.Spec.Manifests, cm("c"))
		if err := env.Client.Update(t.Context(), w); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
			t.Fatalf("a spec update while the hub is down: error %v, want the webhook call to fail", err)
		}
	})
}
