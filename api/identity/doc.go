// Package identity holds the rules of agent identities that the hub's approver, the agent
// and musterctl share: the user and group names of an agent's certificates and of the
// bootstrap tokens it joins with, the annotations that bind a cluster to one key and one
// join, the request an agent makes and the parsing that checks a request asks for exactly
// an agent identity, key fingerprints, and Decide, the approval policy of both the hub's
// approver and `musterctl accept`.
//
// Everything here is pure: no client, no clock. The bytes of a certificate request come
// from a member or a token holder and are attacker input (see FuzzParseAgentCSR and
// FuzzDecide).
package identity
