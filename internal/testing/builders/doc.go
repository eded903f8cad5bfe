// Package builders makes the Kubernetes objects tests start from, in the style of
// Kueue's testing wrappers: MakeJob("j", "ns").Parallelism(3).Completions(5).Indexed().Obj().
// Each builder starts from a small valid object and each method changes one field, so a
// test names only what its case is about. It lives under internal/ because every package
// of the module may use it and nothing outside the module should.
package builders
