// Package dashboards holds Muster's Grafana dashboards as JSON, ready for Grafana's
// "Import dashboard" or a dashboard provisioning ConfigMap:
//
//   - muster-fleet.json: the whole fleet as the hub and agents report it — members and
//     their health, jobs by kind and phase, placement decisions, FleetCronJob lag and
//     missed slots, Work apply latency and failures, the hub controllers' errors and
//     work queues.
//   - muster-member.json: one member cluster, chosen with the cluster variable — its
//     health as the hub sees it, the agent's pods, Job rounds, controllers, Work apply
//     latency and hub certificate.
//
// Both take their Prometheus data source from the datasource variable. The package has
// no Go code of its own: its test checks that every dashboard decodes strictly into the
// Grafana Foundation SDK's types and that every query parses with Prometheus's parser and
// selects only metrics Muster, controller-runtime or client-go export.
package dashboards
