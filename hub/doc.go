// Package hub is the control plane that runs on the hub cluster. It owns the fleet-level
// objects (FleetJob, BroadcastJob, FleetCronJob, WorkloadSpread), turns them into Works for
// the member clusters, and aggregates what the agents report back. Each concept lives in
// its own sub-package: registration (joining clusters and their agents' certificates),
// health (member availability from the agents' Leases), inventory (what each member can
// run), fleetjob (FleetJobs, placed by a WorkloadSpread when one targets them),
// workloadspread (the spreads' status: what their subsets run, and which are
// Schedulable), broadcastjob (hub BroadcastJobs), cronjob (FleetCronJobs), shards (the Works that carry every kind's
// shards), webhook (admission) and metrics. This package root only wires them together.
package hub
