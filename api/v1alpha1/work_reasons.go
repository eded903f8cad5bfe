package v1alpha1

// Reasons of a Work's conditions and of its manifests' conditions and status feedback.
const (
	// WorkReasonFieldManagerConflict is a manifest's Applied=False when another field
	// manager owns a field the manifest sets.
	WorkReasonFieldManagerConflict = "FieldManagerConflict"
	// WorkReasonInvalidManifest is a manifest's Applied=False when it does not decode to
	// an object.
	WorkReasonInvalidManifest = "InvalidManifest"
	// WorkReasonDuplicateManifest is a manifest's Applied=False when an earlier manifest
	// names the same object.
	WorkReasonDuplicateManifest = "DuplicateManifest"
	// WorkReasonForbidden is a manifest's Applied=False when the member's API server
	// refused the Work executor (its RBAC, a quota or an admission policy): the message is
	// the server's, and the agent retries with backoff, so a role the member's admin binds
	// later takes effect without the Work changing.
	WorkReasonForbidden = "Forbidden"
	// WorkReasonObjectExists is a manifest's Available=True: its object exists in the member.
	WorkReasonObjectExists = "ObjectExists"
	// WorkReasonAllManifestsApplied is the Work's Applied=True.
	WorkReasonAllManifestsApplied = "AllManifestsApplied"
	// WorkReasonManifestsFailed is the Work's Applied=False: some manifest failed.
	WorkReasonManifestsFailed = "ManifestsFailed"
	// WorkReasonAllObjectsAvailable is the Work's Available=True.
	WorkReasonAllObjectsAvailable = "AllObjectsAvailable"
	// WorkReasonObjectsMissing is the Work's Available=False: some object is missing.
	WorkReasonObjectsMissing = "ObjectsMissing"
	// WorkReasonStatusTooLarge is the reason in a manifest's fed-back status when the
	// object's status exceeds the feedback limit.
	WorkReasonStatusTooLarge = "StatusTooLarge"
	// WorkReasonStatusFeedbackSynced is a manifest's StatusFeedbackSynced=True: every
	// JSONPath of its feedback rule parses.
	WorkReasonStatusFeedbackSynced = "StatusFeedbackSynced"
	// WorkReasonInvalidJSONPath is a manifest's StatusFeedbackSynced=False: a JSONPath of
	// its feedback rule does not parse.
	WorkReasonInvalidJSONPath = "InvalidJSONPath"
)
