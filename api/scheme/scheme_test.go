package scheme

import (
	"reflect"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// musterKinds are every kind Muster serves, each with its list.
var musterKinds = []string{
	"MemberCluster", "NodeSlice", "Work", "FleetJob", "BroadcastJob", "FleetCronJob", "WorkloadSpread",
}

// TestMusterKinds: every Muster kind and its list is known under muster.dev/v1alpha1, and
// nothing else is (a kind added to the API but not here is caught, as is one left out of
// the scheme: the binaries could neither read nor write it).
func TestMusterKinds(t *testing.T) {
	var want []string
	for _, k := range musterKinds {
		want = append(want, k, k+"List")
	}
	var got []string
	for kind, typ := range Scheme.KnownTypes(musterv1.GroupVersion) {
		// metav1.AddToGroupVersion registers the options and watch kinds in every group.
		if typ.PkgPath() == reflect.TypeOf(musterv1.FleetJob{}).PkgPath() {
			got = append(got, kind)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Muster kinds in the scheme = %v, want %v", got, want)
	}
}

// TestKindsRoundTrip: the kinds Muster's binaries read and write each map to one group,
// version and kind and back to their Go type, and survive JSON encoding through the
// scheme's codecs, as a client sends and receives them.
func TestKindsRoundTrip(t *testing.T) {
	objects := []struct {
		obj runtime.Object
		gvk schema.GroupVersionKind
	}{
		{&musterv1.MemberCluster{Spec: musterv1.MemberClusterSpec{Accepted: true}}, musterv1.GroupVersion.WithKind("MemberCluster")},
		{&musterv1.NodeSlice{ClusterName: "member1", NodeCount: 1, Nodes: []musterv1.NodeInfo{{Name: "n"}}}, musterv1.GroupVersion.WithKind("NodeSlice")},
		{&musterv1.Work{Spec: musterv1.WorkSpec{ApplyOption: &musterv1.ApplyOption{ForceConflicts: true}}}, musterv1.GroupVersion.WithKind("Work")},
		{&musterv1.FleetJob{Spec: musterv1.FleetJobSpec{ShardFailurePolicy: musterv1.ShardContinue}}, musterv1.GroupVersion.WithKind("FleetJob")},
		{&musterv1.BroadcastJob{Spec: musterv1.BroadcastJobSpec{Paused: true}}, musterv1.GroupVersion.WithKind("BroadcastJob")},
		{&musterv1.FleetCronJob{Spec: musterv1.FleetCronJobSpec{Schedule: "@hourly"}}, musterv1.GroupVersion.WithKind("FleetCronJob")},
		{&musterv1.WorkloadSpread{Spec: musterv1.WorkloadSpreadSpec{Subsets: []musterv1.WorkloadSpreadSubset{{Name: "a"}}}}, musterv1.GroupVersion.WithKind("WorkloadSpread")},
		{&musterv1.FleetJobList{Items: []musterv1.FleetJob{{}}}, musterv1.GroupVersion.WithKind("FleetJobList")},
		// The built-in kinds the hub, the agent and musterctl use.
		{&corev1.Pod{}, corev1.SchemeGroupVersion.WithKind("Pod")},
		{&corev1.PodTemplate{}, corev1.SchemeGroupVersion.WithKind("PodTemplate")},
		{&corev1.Namespace{}, corev1.SchemeGroupVersion.WithKind("Namespace")},
		{&corev1.Node{}, corev1.SchemeGroupVersion.WithKind("Node")},
		{&corev1.Secret{}, corev1.SchemeGroupVersion.WithKind("Secret")},
		{&corev1.ServiceAccount{}, corev1.SchemeGroupVersion.WithKind("ServiceAccount")},
		{&batchv1.Job{}, batchv1.SchemeGroupVersion.WithKind("Job")},
		{&eventsv1.Event{}, eventsv1.SchemeGroupVersion.WithKind("Event")},
		{&coordinationv1.Lease{}, coordinationv1.SchemeGroupVersion.WithKind("Lease")},
		{&certificatesv1.CertificateSigningRequest{}, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest")},
		{&rbacv1.ClusterRoleBinding{}, rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")},
		{&apiextensionsv1.CustomResourceDefinition{}, apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")},
	}
	codecs := serializer.NewCodecFactory(Scheme)
	for _, tc := range objects {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			gvks, _, err := Scheme.ObjectKinds(tc.obj)
			if err != nil || len(gvks) != 1 || gvks[0] != tc.gvk {
				t.Fatalf("ObjectKinds(%T) = %v, %v; want only %v", tc.obj, gvks, err, tc.gvk)
			}
			made, err := Scheme.New(tc.gvk)
			if err != nil || reflect.TypeOf(made) != reflect.TypeOf(tc.obj) {
				t.Fatalf("New(%v) = %T, %v; want a %T", tc.gvk, made, err, tc.obj)
			}
			data, err := runtime.Encode(codecs.LegacyCodec(tc.gvk.GroupVersion()), tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			back, err := runtime.Decode(codecs.UniversalDecoder(tc.gvk.GroupVersion()), data)
			if err != nil {
				t.Fatalf("decoding %s: %v", data, err)
			}
			// Decoding sets apiVersion and kind, which the object written had left empty, and
			// applies the kind's defaults (a CRD's conversion strategy).
			want := tc.obj.DeepCopyObject()
			Scheme.Default(want)
			want.GetObjectKind().SetGroupVersionKind(tc.gvk)
			back.GetObjectKind().SetGroupVersionKind(tc.gvk)
			if !reflect.DeepEqual(back, want) {
				t.Errorf("round trip changed the object:\n got %#v\nwant %#v", back, want)
			}
		})
	}
	if _, err := Scheme.New(musterv1.GroupVersion.WithKind("Fleetjob")); err == nil {
		t.Error("New() of a kind spelled wrong succeeded")
	}
}
