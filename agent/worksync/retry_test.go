package worksync

import (
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func TestRetryable(t *testing.T) {
	crb := schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"applied", nil, false},
		{"forbidden by RBAC: a role may be bound later", apierrors.NewForbidden(crb, "root", errors.New("cannot patch")), true},
		{"forbidden, wrapped (a namespace the executor may not create)", fmt.Errorf("namespace x: %w", apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "x", errors.New("no"))), true},
		{"a kind the member does not serve yet", fmt.Errorf("not served: %w", errors.New("no matches for kind")), true},
		{"the member is busy", apierrors.NewTooManyRequests("slow down", 1), true},
		{"a webhook timed out", apierrors.NewInternalError(errors.New("context deadline exceeded")), true},
		{"invalid object: the Work must change", apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "j", field.ErrorList{field.Required(field.NewPath("spec"), "")}), false},
		{"bad request", apierrors.NewBadRequest("no"), false},
		{"another field manager: the Work must force", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "c", errors.New("conflict")), false},
		{"does not decode", invalidManifest{errors.New("not JSON")}, false},
		{"a second manifest for one object", duplicateManifest{ordinal: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryable(tc.err); got != tc.want {
				t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestRetryDelayDoublesBetweenBounds(t *testing.T) {
	for _, tc := range []struct{ failingFor, want time.Duration }{
		{0, 2 * time.Second},
		{time.Second, 2 * time.Second},
		{2 * time.Second, 2 * time.Second},
		{4 * time.Second, 4 * time.Second},
		{90 * time.Second, 90 * time.Second},
		{time.Hour, 5 * time.Minute},
	} {
		if got := retryDelay(tc.failingFor); got != tc.want {
			t.Errorf("retryDelay(%v) = %v, want %v", tc.failingFor, got, tc.want)
		}
	}
}

func TestNextAttempt(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	refusedSince := func(ordinal int32, ago time.Duration) musterv1.ManifestStatus {
		return musterv1.ManifestStatus{Ordinal: ordinal, Conditions: []metav1.Condition{{
			Type: musterv1.WorkApplied, Status: metav1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-ago)),
		}}}
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "clusterroles"}, "x", errors.New("no"))
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "c", errors.New("conflict"))
	for _, tc := range []struct {
		name      string
		reported  []musterv1.ManifestStatus
		outcomes  []outcome
		wantAfter time.Duration
		wantRetry bool
	}{
		{"all applied", nil, []outcome{{ordinal: 0}}, 0, false},
		{"only failures a retry cannot fix", []musterv1.ManifestStatus{refusedSince(0, time.Minute)}, []outcome{{ordinal: 0, err: conflict}}, 0, false},
		{"refused just now", []musterv1.ManifestStatus{refusedSince(0, 0)}, []outcome{{ordinal: 0, err: forbidden}}, 2 * time.Second, true},
		{"refused for a minute waits a minute", []musterv1.ManifestStatus{refusedSince(0, time.Minute)}, []outcome{{ordinal: 0, err: forbidden}}, time.Minute, true},
		{"refused for a day waits the cap", []musterv1.ManifestStatus{refusedSince(0, 24*time.Hour)}, []outcome{{ordinal: 0, err: forbidden}}, 5 * time.Minute, true},
		{"the newest refusal sets the pace", []musterv1.ManifestStatus{refusedSince(0, time.Hour), refusedSince(1, 10*time.Second)},
			[]outcome{{ordinal: 0, err: forbidden}, {ordinal: 1, err: forbidden}}, 10 * time.Second, true},
		{"a refusal not reported yet retries soon", nil, []outcome{{ordinal: 0, err: forbidden}}, 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after, retry := nextAttempt(tc.reported, tc.outcomes, now)
			if after != tc.wantAfter || retry != tc.wantRetry {
				t.Errorf("nextAttempt = %v, %v; want %v, %v", after, retry, tc.wantAfter, tc.wantRetry)
			}
		})
	}
}

func TestParseExecutor(t *testing.T) {
	for _, tc := range []struct {
		in, want, wantErr string
	}{
		{in: "muster-agent/muster-work-executor", want: "system:serviceaccount:muster-agent:muster-work-executor"},
		{in: "ops/deployer.v2", want: "system:serviceaccount:ops:deployer.v2"},
		{in: "muster-work-executor", wantErr: `work executor "muster-work-executor": want NAMESPACE/NAME of a ServiceAccount`},
		{in: "Ops/deployer", wantErr: `work executor "Ops/deployer": namespace: a lowercase RFC 1123 label must consist of`},
		{in: "ops/", wantErr: `work executor "ops/": name: a lowercase RFC 1123 subdomain must consist of`},
		{in: "ops/a/b", wantErr: `work executor "ops/a/b": name: a lowercase RFC 1123 subdomain must consist of`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			sa, err := ParseExecutor(tc.in)
			switch {
			case tc.wantErr != "":
				if err == nil || len(err.Error()) < len(tc.wantErr) || err.Error()[:len(tc.wantErr)] != tc.wantErr {
					t.Errorf("ParseExecutor(%q) error = %v, want one starting %q", tc.in, err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("ParseExecutor(%q): %v", tc.in, err)
			case ExecutorUsername(sa) != tc.want:
				t.Errorf("ParseExecutor(%q) impersonates %q, want %q", tc.in, ExecutorUsername(sa), tc.want)
			}
		})
	}
}
