package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of every Muster kind.
var GroupVersion = schema.GroupVersion{Group: "muster.dev", Version: "v1alpha1"}

var (
	// SchemeBuilder registers Muster's kinds with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Muster's kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&MemberCluster{}, &MemberClusterList{},
		&Work{}, &WorkList{},
		&NodeSlice{}, &NodeSliceList{},
		&FleetJob{}, &FleetJobList{},
		&BroadcastJob{}, &BroadcastJobList{},
		&FleetCronJob{}, &FleetCronJobList{},
		&WorkloadSpread{}, &WorkloadSpreadList{},
	)
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
