// Package hub is the control plane that runs on the hub cluster. It owns the fleet-level
// objects (FleetJob, BroadcastJob, FleetCronJob, WorkloadSpread), turns them into Works for
// the member clusters, and aggregates what the agents report back. Each concept lives in
// its own sub-package (registration, health, inventory, fleetjob, broadcastjob, cronjob,
// workloadspread); this package root only wires them together.
package hub
