package worksync

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	agentmetrics "github.com/musterhq/muster/agent/metrics"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// reportFailures counts every manifest that failed to apply in this attempt, and logs the
// failures the Work's status does not report yet: a manifest the member keeps refusing is
// logged once, not on every retry.
func (r *Reconciler) reportFailures(ctx context.Context, work *musterv1.Work, outcomes []outcome) {
	for _, o := range outcomes {
		if o.err != nil {
			agentmetrics.WorkApplyFailures.WithLabelValues(r.Cluster).Inc()
		}
	}
	for _, o := range newFailures(work.Status.Manifests, outcomes) {
		log.FromContext(ctx).Error(o.err, "a manifest of the Work failed to apply", "cluster", r.Cluster, "manifest", o.ordinal,
			"kind", o.id.Kind, "object", o.id.Namespace+"/"+o.id.Name)
	}
}

// newFailures returns the failed outcomes whose failure the reported manifests do not
// already show with the same message.
func newFailures(reported []musterv1.ManifestStatus, outcomes []outcome) []outcome {
	was := map[int32]string{}
	for _, m := range reported {
		if c := meta.FindStatusCondition(m.Conditions, musterv1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse {
			was[m.Ordinal] = c.Message
		}
	}
	var fresh []outcome
	for _, o := range outcomes {
		if o.err == nil {
			continue
		}
		if msg, ok := was[int32(o.ordinal)]; ok && msg == o.err.Error() {
			continue
		}
		fresh = append(fresh, o)
	}
	return fresh
}
