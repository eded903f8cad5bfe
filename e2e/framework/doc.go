// Package framework brings up the multi-cluster fleets that Muster's end-to-end suites run
// against: a hub cluster and member clusters behind a ClusterProvider ("local" runs
// kwok-backed control planes as processes on this machine, "kind" runs kind clusters where
// Docker exists), plus the waits and object helpers the suites share.
package framework
