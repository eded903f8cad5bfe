// Package robustness holds the hub's fault-injection tests: the real FleetJob controller
// against a real API server, through a client that fails writes (before or after the API
// server applied them), hides the newest Works from its cache, and a manager restarted at
// seeded random points, with simulated members that run shards as agents do and can be
// removed. A checker then asserts, over what the run left, that every index of every job
// ran and is counted exactly once. The package has no code of its own outside its tests.
package robustness
