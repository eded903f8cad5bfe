// Package worksync applies the Works the hub addresses to this member and reports back.
//
// The Reconciler is a multicluster-runtime reconciler: it watches Works in the cluster's
// namespace on the hub (the engaged cluster "hub") and the objects it applied in the
// member (the local cluster). For each Work it server-side-applies every manifest with
// field manager muster-agent, creating missing namespaces; a manifest that fails gets
// Applied=False with the API server's message while the others are applied. It writes one
// ManifestStatus per manifest (conditions Applied and Available, the object's generation
// and its fed-back status) and Work-level Applied and Available conditions.
//
// Everything it does to member objects (apply, read, watch, delete) goes through the
// Executor, a client that impersonates the Work executor ServiceAccount, so the member's
// RBAC for that identity, not the agent's own role, bounds what a Work can do. A refusal
// gets Applied=False reason Forbidden; refusals a retry can fix are retried, without the
// Work changing, after as long as they have been failing (2s doubling to 5m).
//
// A Work the hub's webhook did not check (created while it was down) cannot make the
// agent loop: of two manifests for one object only the first is applied, the later one
// gets Applied=False DuplicateManifest; a feedback JSONPath that does not parse gives its
// manifest StatusFeedbackSynced=False InvalidJSONPath, as OCM reports feedback apart from
// Applied. Both use the rules of api/work, which the webhook applies at admission.
//
// A finalizer on the Work makes deletion wait until the member objects are gone (unless
// the Work says Orphan). A namespace the agent created for a manifest is labelled
// muster.dev/created-by=muster-agent and annotated with the Work that needed it, and is
// never deleted by the agent: deleting a namespace shared by many jobs' Works would race
// with the next Work applying there.
//
// Nothing here deletes member objects because the hub is unreachable: reads come from the
// cache, a failed status write is retried, and the member keeps running what it has.
package worksync
