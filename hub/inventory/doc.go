// Package inventory keeps the hub's view of every member node, loaded from the NodeSlices
// the agents write, in go-memdb tables, and answers the placement questions the hub
// controllers ask: which nodes of a cluster could run a pod template, and how much a
// cluster can allocate.
//
// Each NodeSlice is loaded into an immutable sliceIndex: its nodes, sorted by name, and a
// label index (key → value → positions). An eligible-node query turns the template's
// nodeSelector and required node affinity into a plan (plan.go): per affinity term, the
// label lookups (equality, In, Exists) that every matching node passes. Per slice it
// checks, with nodefit, only the nodes of each term's smallest lookup, so a selective
// template visits its candidates rather than the fleet; NotIn, DoesNotExist, Gt, Lt and
// matchFields are left to nodefit's check, which decides every candidate. When the
// candidates are many, it numbers the slice's nodes by kind (kinds.go): alike in what
// nodefit.Reads says the check reads (state, which requests the allocatable holds, the
// classes of the label values it names), from arrays, ranks and postings built at load, and
// checks one node per kind. Each slice remembers the fitting nodes of the last templates
// asked (verdicts.go), keyed by nodefit.Fingerprint; a replaced slice gets a new index, so
// nothing is ever stale.
//
// The package holds no controller: hub/nodeslice loads the slices into it, and the placement
// controllers read it, so none of them imports another controller package.
package inventory
