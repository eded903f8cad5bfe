// Package podcontrol is the one path by which the agent's job controllers (Job and
// BroadcastJob) list, create, delete and release their pods. Every write is recorded in
// the owner's expectations, so that the next reconcile waits until its cache shows it.
// What differs between the kinds (pod templates, names, adoption rules, the finalizer
// they track pods with) stays with the kind and comes in as pods, a selector, an Adopter
// or a finalizer name.
package podcontrol
