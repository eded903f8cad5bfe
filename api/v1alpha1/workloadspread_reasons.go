package v1alpha1

// Reasons of a WorkloadSpread subset's conditions and events.
const (
	// WorkloadSpreadReasonPodUnschedulable is a subset's Schedulable=False (and its
	// warning event): its pods waited for a node longer than rescheduleCriticalSeconds.
	WorkloadSpreadReasonPodUnschedulable = "PodUnschedulable"
)
