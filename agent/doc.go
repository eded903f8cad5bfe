// Package agent runs in every member cluster. It joins the cluster to the hub, keeps its
// identity and heartbeat, applies the Works the hub sends, runs the member-side Job and
// BroadcastJob controllers, and reports back status, node inventory and the Warning events
// about what it runs. Each concept lives in its own sub-package; this package root only
// wires them together.
package agent
