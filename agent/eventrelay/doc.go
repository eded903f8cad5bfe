// Package eventrelay carries the member's Warning events about what a Work runs to the
// Work on the hub, so `musterctl describe` (and `kubectl describe work`) shows why a
// shard is stuck without access to the member: a pod that cannot be scheduled or pull
// its image, a Job that hit its backoff limit or could not create pods.
//
// The agent caches only Warning events (a field selector on type), and relays an event
// about a Job or BroadcastJob the agent applied for a Work, or about one of their pods,
// as an event on that Work with the same type and reason, a note that names the cluster
// and the member object, and that object as the event's related object. Repeats of one
// member event are relayed when its count grows; the hub's event recorder folds events
// with the same reason about one member object into one series, as the member does.
//
// Each Work has its own budget of relayed events (a token bucket), so one job whose pods
// fail in a loop cannot crowd out the events of other users' Works or flood the hub's
// API server; what exceeds the budget is dropped, as the kubelet's own event spam filter
// drops it.
package eventrelay
