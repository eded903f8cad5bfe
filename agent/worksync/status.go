package worksync

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	workapi "github.com/musterhq/muster/api/work"
)

// ConditionFeedbackSynced is set on a manifest with a JSONPaths feedback rule: False when a
// path does not parse, with the parser's message. As in OCM's ManifestWork, feedback is
// reported apart from Applied: the object was applied, only its values cannot come back.
const ConditionFeedbackSynced = "StatusFeedbackSynced"

// MaxFeedbackBytes caps one manifest's fed-back status, so that a Work stays far below
// etcd's object size limit whatever its objects report.
const MaxFeedbackBytes = 16 << 10

// outcome is what applying one manifest did.
type outcome struct {
	ordinal int
	id      musterv1.ResourceIdentifier
	// object is the member object as the API server returned it; nil when it failed.
	object *unstructured.Unstructured
	err    error
}

// manifestStatus turns an outcome into the manifest's status, keeping the transition
// times of conditions that did not change since prev.
func manifestStatus(o outcome, rule *musterv1.FeedbackRule, prev *musterv1.ManifestStatus, generation int64) musterv1.ManifestStatus {
	st := musterv1.ManifestStatus{Ordinal: int32(o.ordinal), Resource: o.id}
	if prev != nil {
		st.Conditions = append(st.Conditions, prev.Conditions...)
	}
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: generation})
	}
	if o.err != nil {
		set(musterv1.WorkApplied, metav1.ConditionFalse, applyFailureReason(o.err), o.err.Error())
		set(musterv1.WorkAvailable, metav1.ConditionUnknown, musterv1.ReasonApplyFailed, "the manifest was not applied")
		return st
	}
	set(musterv1.WorkApplied, metav1.ConditionTrue, musterv1.ReasonApplied, "applied with server-side apply")
	set(musterv1.WorkAvailable, metav1.ConditionTrue, musterv1.WorkReasonObjectExists, "the object exists in the member")
	st.ObservedGeneration = o.object.GetGeneration()
	var bad []string
	st.Status, st.Values, bad = feedback(o.object, rule)
	switch {
	case rule == nil || rule.Mode != musterv1.FeedbackJSONPaths:
		meta.RemoveStatusCondition(&st.Conditions, ConditionFeedbackSynced)
	case len(bad) > 0:
		set(ConditionFeedbackSynced, metav1.ConditionFalse, musterv1.WorkReasonInvalidJSONPath, strings.Join(bad, "; "))
	default:
		set(ConditionFeedbackSynced, metav1.ConditionTrue, musterv1.WorkReasonStatusFeedbackSynced, "every JSONPath parses")
	}
	return st
}

func applyFailureReason(err error) string {
	switch {
	case apierrors.IsConflict(err):
		return musterv1.WorkReasonFieldManagerConflict
	case apierrors.IsForbidden(err):
		return musterv1.WorkReasonForbidden
	case errorsIsInvalidManifest(err):
		return musterv1.WorkReasonInvalidManifest
	case errors.As(err, new(duplicateManifest)):
		return musterv1.WorkReasonDuplicateManifest
	default:
		return musterv1.ReasonApplyFailed
	}
}

// invalidManifest marks errors found before talking to the API server.
type invalidManifest struct{ error }

// duplicateManifest is a manifest skipped because an earlier one names the same object.
type duplicateManifest struct {
	ordinal, first int
	id             musterv1.ResourceIdentifier
}

func (d duplicateManifest) Error() string {
	return fmt.Sprintf("manifest %d names the same object as manifest %d (%s): only manifest %d is applied; remove one of them",
		d.ordinal, d.first, workapi.KeyOf(d.id), d.first)
}

func errorsIsInvalidManifest(err error) bool {
	var invalid invalidManifest
	return errors.As(err, &invalid)
}

// feedback extracts what the rule asks for: the whole .status by default, capped at
// MaxFeedbackBytes, or the values of its JSONPaths, with a message for each path that
// does not parse.
func feedback(obj *unstructured.Unstructured, rule *musterv1.FeedbackRule) (*runtime.RawExtension, []musterv1.FeedbackValue, []string) {
	mode := musterv1.FeedbackStatus
	if rule != nil {
		mode = rule.Mode
	}
	switch mode {
	case musterv1.FeedbackNone:
		return nil, nil, nil
	case musterv1.FeedbackJSONPaths:
		values, bad := jsonPathValues(obj, rule.JSONPaths)
		return nil, values, bad
	}
	status, ok := obj.Object["status"]
	if !ok {
		return nil, nil, nil
	}
	raw, err := json.Marshal(status)
	if err != nil || len(raw) > MaxFeedbackBytes {
		raw, _ = json.Marshal(map[string]string{"reason": musterv1.WorkReasonStatusTooLarge, "message": fmt.Sprintf("the status is larger than %d bytes; use JSONPaths feedback", MaxFeedbackBytes)})
	}
	return &runtime.RawExtension{Raw: raw}, nil, nil
}

func jsonPathValues(obj *unstructured.Unstructured, rules []musterv1.JSONPathRule) ([]musterv1.FeedbackValue, []string) {
	var values []musterv1.FeedbackValue
	var bad []string
	for i, r := range rules {
		jp, err := workapi.ParseJSONPath(r.Name, r.Path)
		if err != nil {
			bad = append(bad, fmt.Sprintf("jsonPaths[%d] (%s) %q: %v", i, r.Name, r.Path, err))
			continue
		}
		results, err := jp.FindResults(obj.Object)
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			continue
		}
		raw, err := json.Marshal(results[0][0].Interface())
		if err != nil || len(raw) > MaxFeedbackBytes {
			continue
		}
		values = append(values, musterv1.FeedbackValue{Name: r.Name, Value: runtime.RawExtension{Raw: raw}})
	}
	return values, bad
}

// workConditions summarise the manifests.
func workConditions(prev []metav1.Condition, manifests []musterv1.ManifestStatus, generation int64) []metav1.Condition {
	conds := append([]metav1.Condition(nil), prev...)
	failed, missing := 0, 0
	for _, m := range manifests {
		if !meta.IsStatusConditionTrue(m.Conditions, musterv1.WorkApplied) {
			failed++
		}
		if !meta.IsStatusConditionTrue(m.Conditions, musterv1.WorkAvailable) {
			missing++
		}
	}
	applied := metav1.Condition{Type: musterv1.WorkApplied, Status: metav1.ConditionTrue, Reason: musterv1.WorkReasonAllManifestsApplied,
		Message: fmt.Sprintf("%d manifests applied", len(manifests)), ObservedGeneration: generation}
	if failed > 0 {
		applied.Status, applied.Reason = metav1.ConditionFalse, musterv1.WorkReasonManifestsFailed
		applied.Message = fmt.Sprintf("%d of %d manifests failed to apply", failed, len(manifests))
	}
	available := metav1.Condition{Type: musterv1.WorkAvailable, Status: metav1.ConditionTrue, Reason: musterv1.WorkReasonAllObjectsAvailable,
		Message: fmt.Sprintf("%d objects exist in the member", len(manifests)), ObservedGeneration: generation}
	if missing > 0 {
		available.Status, available.Reason = metav1.ConditionFalse, musterv1.WorkReasonObjectsMissing
		available.Message = fmt.Sprintf("%d of %d objects do not exist in the member", missing, len(manifests))
	}
	meta.SetStatusCondition(&conds, applied)
	meta.SetStatusCondition(&conds, available)
	return conds
}

// ruleFor finds the feedback rule of an object, if any.
func ruleFor(rules []musterv1.FeedbackRule, id musterv1.ResourceIdentifier) *musterv1.FeedbackRule {
	for i := range rules {
		r := rules[i].Resource
		if r.Group == id.Group && r.Kind == id.Kind && r.Namespace == id.Namespace && r.Name == id.Name {
			return &rules[i]
		}
	}
	return nil
}
