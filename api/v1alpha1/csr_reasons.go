package v1alpha1

// Reasons of the Approved and Denied conditions Muster adds to an agent's
// CertificateSigningRequest (see ApprovalCondition and DenialCondition); a key mismatch
// uses the shared ReasonAgentKeyMismatch.
const (
	// CSRReasonApprovedByHub is the hub's approval of a request from an accepted cluster.
	CSRReasonApprovedByHub = "MusterHubApproved"
	// CSRReasonAcceptedByMusterctl is the approval `musterctl accept` adds.
	CSRReasonAcceptedByMusterctl = "MusterctlAccept"
	// CSRReasonDeniedByMusterctl is the denial `musterctl deny` adds.
	CSRReasonDeniedByMusterctl = "MusterctlDeny"
)
