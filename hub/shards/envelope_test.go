package shards_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/shards"
)

func TestNewWorkAndDecodeRoundTrip(t *testing.T) {
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "render", Namespace: "team-a", Labels: map[string]string{"app": "render"}},
		Spec:       batchv1.JobSpec{Parallelism: ptr.To[int32](3)},
	}
	labels := map[string]string{musterv1.FleetJobNameLabel: "render"}
	work, err := shards.NewWork("fleetjob-team-a-render", "member1", labels, job)
	if err != nil {
		t.Fatal(err)
	}
	if work.Namespace != "muster-member-member1" || work.Name != "fleetjob-team-a-render" {
		t.Errorf("Work %s/%s, want muster-member-member1/fleetjob-team-a-render", work.Namespace, work.Name)
	}
	if diff := cmp.Diff(map[string]string{musterv1.FleetJobNameLabel: "render", musterv1.ClusterNameLabel: "member1"}, work.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if len(labels) != 1 {
		t.Errorf("NewWork changed the caller's labels: %v", labels)
	}
	if work.Spec.DeleteOption == nil || work.Spec.DeleteOption.PropagationPolicy != musterv1.DeletePropagationDelete {
		t.Errorf("delete option %+v: the member object must go with its Work", work.Spec.DeleteOption)
	}

	tests := []struct {
		name       string
		fed        []byte
		wantStatus *batchv1.JobStatus
		wantErr    bool
	}{
		{name: "before the agent reports", wantStatus: nil},
		{name: "with the status fed back", fed: []byte(`{"active":2,"succeeded":1}`), wantStatus: &batchv1.JobStatus{Active: 2, Succeeded: 1}},
		{name: "with a status that is not the kind's", fed: []byte(`{"active":"two"}`), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := work.DeepCopy()
			if tc.fed != nil {
				w.Status.Manifests = []musterv1.ManifestStatus{{Status: &runtime.RawExtension{Raw: tc.fed}}}
			}
			got, status, err := shards.Decode[batchv1.Job, batchv1.JobStatus](w)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(job, got); diff != "" {
				t.Errorf("decoded object (-sent +decoded):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeRefusesWorksItDidNotWrite(t *testing.T) {
	two := &musterv1.Work{Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{
		{RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}}, {RawExtension: runtime.RawExtension{Raw: []byte(`{}`)}},
	}}}
	garbled := &musterv1.Work{Spec: musterv1.WorkSpec{Manifests: []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"spec":`)}}}}}
	for name, w := range map[string]*musterv1.Work{"two manifests": two, "a manifest that is not JSON": garbled} {
		if obj, _, err := shards.Decode[batchv1.Job, batchv1.JobStatus](w); err == nil || obj != nil {
			t.Errorf("%s: decoded %v, err %v; want an error", name, obj, err)
		}
	}
}
