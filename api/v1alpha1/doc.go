// Package v1alpha1 holds Muster's API: the kinds a user submits to the hub (FleetJob,
// BroadcastJob, FleetCronJob, WorkloadSpread) and the kinds the hub and its agents exchange
// (MemberCluster, Work, NodeSlice).
//
// Validation that OpenAPI and CEL can express lives here as markers beside the fields it
// guards, so a bad object is rejected at admission with a message that names the field.
//
// +kubebuilder:object:generate=true
// +groupName=muster.dev
package v1alpha1
