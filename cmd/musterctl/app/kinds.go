package app

import (
	"fmt"
	"strings"
)

// kindAliases are names musterctl accepts beyond what the CRDs declare (plural, singular
// and short names such as fj, bcj, fcj, wrs, mc and nsl come from the API server's
// discovery).
var kindAliases = map[string]string{
	"cluster":  "memberclusters.muster.dev",
	"clusters": "memberclusters.muster.dev",
}

// musterKinds is the list shown when a command needs a kind and got none.
const musterKinds = `fleetjobs (fj), broadcastjobs (bcj), fleetcronjobs (fcj), workloadspreads (wrs),
memberclusters (clusters, mc), works, nodeslices (nsl)`

// expandKinds rewrites the kind part of kubectl-style arguments ("fj", "fj,bcj",
// "clusters/eu-1") so that musterctl's own aliases resolve.
func expandKinds(arg string) string {
	kinds, name, hasName := strings.Cut(arg, "/")
	parts := strings.Split(kinds, ",")
	for i, k := range parts {
		if full, ok := kindAliases[strings.ToLower(k)]; ok {
			parts[i] = full
		}
	}
	out := strings.Join(parts, ",")
	if hasName {
		out += "/" + name
	}
	return out
}

// expandArgs applies expandKinds to the first argument, which names the kinds, and to
// every "kind/name" argument.
func expandArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if i == 0 || strings.Contains(a, "/") {
			a = expandKinds(a)
		}
		out[i] = a
	}
	return out
}

// errNoKind is the error of a command run without the kind it needs.
func errNoKind(verb string) error {
	return fmt.Errorf("you must specify the type of resource to %s; Muster's kinds are:\n%s", verb, musterKinds)
}
