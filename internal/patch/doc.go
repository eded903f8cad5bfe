// Package patch is the one way the hub's controllers write the objects they reconcile:
// snapshot the object as read (NewHelper), change it in memory, then Patch writes only what
// changed, metadata and spec through the main resource and status through the status
// subresource, and writes nothing when nothing changed. Requeue turns the errors a write
// can lose a race with into a short requeue, in one place. Refusals (Helper option Paced)
// paces the writes of an object after the API server refused one as invalid, which no
// retry fixes: logged and announced once, retried with a growing backoff.
//
// Why the writes are safe under concurrency:
//
//   - Metadata and spec are always written under the optimistic lock (the snapshot's
//     resourceVersion). A JSON merge patch replaces lists whole: without the lock, adding
//     a finalizer from a stale copy would drop one another writer added meanwhile (the
//     agent's cleanup finalizer on a Work, the garbage collector's), and the pause or
//     taints a controller decides from what it read must not land on an object that
//     changed since.
//
//   - Status of a kind with one writer (FleetJob, the hub's BroadcastJob, FleetCronJob,
//     WorkloadSpread: only the leading hub's controller of that kind writes it) is patched without a resourceVersion.
//     The patch holds only the fields that changed since the snapshot, so nobody else's
//     write can be clobbered, and an edit of the object's labels, annotations or spec by
//     a user no longer makes the status write conflict. The one writer can still race
//     itself: a reconcile that starts before the cache has seen the previous write reads
//     a status older than the server's, and would report its news a second time. Writes
//     remembers the resourceVersion of each such write, and Writes.Check refuses (with
//     ErrStale, which Requeue retries shortly) an object the cache shows older than that,
//     which is what the conflict did before. resourceVersions are compared with
//     apimachinery's CompareResourceVersion, which the API server guarantees for etcd.
//
//   - Status written by several controllers (MemberCluster: registration's Accepted,
//     health's Available, the agent's Joined) keeps the optimistic lock (SharedStatus): a
//     merge patch replaces the conditions list whole, so a write from a stale list would
//     drop another controller's condition. A conflict is retried from a fresh read.
package patch
