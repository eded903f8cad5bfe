package v1alpha1

// Reasons of a FleetCronJob's conditions and events; its creations and deletions of runs
// use the shared ReasonSuccessfulCreate, ReasonFailedCreate and ReasonSuccessfulDelete.
const (
	// FleetCronJobReasonScheduleValid is ScheduleValid=True.
	FleetCronJobReasonScheduleValid = "ScheduleValid"
	// FleetCronJobReasonInvalidSchedule is ScheduleValid=False (and its warning event):
	// the schedule or time zone does not parse, or never fires.
	FleetCronJobReasonInvalidSchedule = "InvalidSchedule"
	// FleetCronJobReasonJobAlreadyActive is the event of a slot skipped under
	// concurrencyPolicy Forbid because a run is still active.
	FleetCronJobReasonJobAlreadyActive = "JobAlreadyActive"
	// FleetCronJobReasonFailedDelete is the warning event of a run that could not be deleted.
	FleetCronJobReasonFailedDelete = "FailedDelete"
	// FleetCronJobReasonTooManyMissedTimes is the warning event of more missed slots than
	// are looked back on: only the latest runs.
	FleetCronJobReasonTooManyMissedTimes = "TooManyMissedTimes"
	// FleetCronJobReasonSawCompletedJob is the event of an active run seen finished.
	FleetCronJobReasonSawCompletedJob = "SawCompletedJob"
	// FleetCronJobReasonMissingJob is the event of an active run that no longer exists.
	FleetCronJobReasonMissingJob = "MissingJob"
	// FleetCronJobReasonLostJob is the warning event of a run deleted because failover
	// evicted it from every member cluster and none can take it: it counts as finished
	// (failed), so that Forbid and Replace do not wait for it for ever.
	FleetCronJobReasonLostJob = "LostJob"
	// FleetCronJobReasonChildNameTaken is the warning event of a run created under its
	// alternate name because an object the cron does not control holds the slot's name
	// (or of a run not created because both are held).
	FleetCronJobReasonChildNameTaken = "ChildNameTaken"
)
