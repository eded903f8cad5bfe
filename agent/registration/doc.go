// Package registration gives an agent its hub identity and keeps it fresh.
//
// On first start the agent reads the bootstrap Secret that `musterctl join` left in the
// member (hub URL, hub CA, bootstrap token, cluster name), registers its MemberCluster,
// makes a private key that never leaves the member, and asks the hub for a client
// certificate for muster:member:<cluster>:agent through a CertificateSigningRequest. The
// key and certificate are kept in a Secret in the member. The Rotator renews the
// certificate when 20% of its lifetime remains, with the agent's own identity, and swaps it
// into the running hub connections without a restart. Each join asks for a new join id
// (muster:member:<cluster>:join:<id>) and rotations keep it; after a deny the hub refuses
// that join for good, and the Rejoiner restarts the agent to join again once an
// administrator installs a new join line.
package registration
