// Package placement holds Muster's placement algorithms as pure functions over plain
// snapshots: node fitness, cluster selection, replica division, subset fill order,
// deletion order and parallelism math. Nothing here talks to an API server; `now` is
// always passed in. Each algorithm is a sub-package with table tests and benchmarks.
package placement
