package webhook_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronapi "github.com/musterhq/muster/api/cronjob"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// A FleetCronJob's run carries the template the cron's admission dry-ran, so the webhook
// does not dry-run it again; a FleetJob that only names the cron its owner, with a
// template of its own, is dry-run and refused as any other. Pod Security is still checked
// on every run: a namespace made stricter after the cron was admitted refuses its next run.
func TestCronRunsAreNotDryRunAgain(t *testing.T) {
	ns := levelNamespace(t, "runs", nil)
	cj := cronJob("nightly", ns, nil, nil)
	expectAdmitted(t, cj)
	slot := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	runOf := func(name string, slot time.Time) *musterv1.FleetJob {
		return &musterv1.FleetJob{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: ns,
				Annotations:     map[string]string{musterv1.ScheduledTimeAnnotation: slot.Format(time.RFC3339)},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, musterv1.GroupVersion.WithKind("FleetCronJob"))},
			},
			Spec: *cj.Spec.JobTemplate.Spec.DeepCopy(),
		}
	}

	// The webhook reads the cron from the hub's cache, which may not hold it yet; until
	// it does, a run is dry-run as any FleetJob is. Each attempt creates the run of the
	// next slot, then a lookalike with an image of its own, whose dry-run must be seen in
	// the audit log: the run's, had there been one, was written before it.
	attempt := 0
	envtest.Eventually(t, "a run of the cron admitted without a dry-run", func() (bool, string) {
		attempt++
		slot = slot.Add(time.Minute)
		run := runOf(cronapi.ChildName(cj, slot), slot)
		expectAdmitted(t, run)
		lookalike := runOf(fmt.Sprintf("lookalike-%d", attempt), slot)
		lookalike.Spec.Template.Spec.Template.Spec.Containers[0].Image = "busybox:1.37"
		expectAdmitted(t, lookalike)
		envtest.Eventually(t, "the lookalike's dry-run in the audit log", func() (bool, string) {
			seen, err := dryRunAudited(lookalike.Name)
			return seen, fmt.Sprint(err)
		})
		ran, err := dryRunAudited(run.Name)
		if err != nil {
			t.Fatal(err)
		}
		return !ran, fmt.Sprintf("attempt %d: run %s was dry-run", attempt, run.Name)
	})
	t.Logf("a run passed without a dry-run at attempt %d", attempt)

	t.Run("a lookalike with a bad template is refused", func(t *testing.T) {
		bad := runOf(cronapi.ChildName(cj, slot.Add(time.Minute)), slot.Add(time.Minute))
		bad.Spec.Template.Spec.Parallelism = ptrTo[int32](-1)
		expectRefused(t, bad, []refusal{{"spec.template.spec.parallelism", "Invalid value: -1: must be greater than or equal to 0"}})
	})

	t.Run("a run in a namespace made restricted since is refused", func(t *testing.T) {
		var namespace corev1.Namespace
		if err := env.Client.Get(t.Context(), client.ObjectKey{Name: ns}, &namespace); err != nil {
			t.Fatal(err)
		}
		namespace.Labels = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}
		if err := env.Client.Update(t.Context(), &namespace); err != nil {
			t.Fatal(err)
		}
		next := slot.Add(time.Hour)
		envtest.Eventually(t, "the next run refused for Pod Security", func() (bool, string) {
			next = next.Add(time.Minute)
			err := env.Client.Create(t.Context(), runOf(cronapi.ChildName(cj, next), next))
			return err != nil && strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`), fmt.Sprint(err)
		})
	})
}

// dryRunAudited says whether the audit log holds the hub's dry-run create of a Job named
// name in the hub's namespace: the check of a FleetJob of that name.
func dryRunAudited(name string) (bool, error) {
	f, err := os.Open(auditLog)
	if err != nil {
		return false, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var ev struct {
			Verb, Stage string
			ObjectRef   struct{ Resource, Namespace, Name string } `json:"objectRef"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			return false, err
		}
		if ev.Verb == "create" && ev.Stage == "ResponseComplete" && ev.ObjectRef.Resource == "jobs" &&
			ev.ObjectRef.Namespace == hubNamespace && ev.ObjectRef.Name == name {
			return true, nil
		}
	}
	return false, scanner.Err()
}
