package webhook

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/names"
	"github.com/musterhq/muster/api/templates"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/api/workloadspread"
)

// +kubebuilder:rbac:groups=muster.dev,resources=fleetjobs,verbs=get

// subsetCheck is the verdict on the Job of one subset's shards, with the complaints on the
// Job's own fields: errs are the Pod Security refusals and the API server's, podSecurity
// the Pod Security warnings and audit findings.
type subsetCheck struct {
	subset      templates.Subset
	errs        field.ErrorList
	podSecurity findings
}

// subsetPods is where a subset Job keeps its pod template.
var subsetPods = field.NewPath("spec", "template")

// checkSubsets checks, for each subset of ws, the Job its shards of fj get: named as the
// hub names it, with the subset's patch, node terms and tolerations in its pods. Its pods
// are evaluated by psa, and the Job dry-run. The CRD caps a spread at 16 subsets, so this
// is at most 16 calls, each bounded by callTimeout.
func (d dryRun) checkSubsets(ctx context.Context, fj *musterv1.FleetJob, ws *musterv1.WorkloadSpread, psa psaCheck) ([]subsetCheck, error) {
	subsets := field.NewPath("spec", "subsets")
	out := make([]subsetCheck, 0, len(ws.Spec.Subsets))
	for i := range ws.Spec.Subsets {
		spec := &ws.Spec.Subsets[i]
		subset, pods, err := shapeSubset(&fj.Spec.Template.Spec.Template, spec)
		subset.Path = subsets.Index(i)
		if err != nil {
			out = append(out, subsetCheck{subset: subset, errs: field.ErrorList{
				field.Invalid(field.NewPath("spec", "template"), field.OmitValueType{}, err.Error()),
			}})
			continue
		}
		found := psa.evaluate(subsetPods, pods)
		job := templates.SubsetJob(names.ShardJob(fj.Name, spec.Name), fj.UID, &fj.Spec.Template, spec.Name, pods)
		errs, err := d.check(ctx, job, func(f string) string { return f })
		if err != nil {
			return nil, err
		}
		out = append(out, subsetCheck{subset: subset, errs: slices.Concat(found.refusals, errs), podSecurity: findings{warnings: found.warnings, audits: found.audits}})
	}
	return out, nil
}

// shapeSubset returns the pod template of s's pods and, for mapping complaints back to s,
// how many tolerations and preferred terms the template has before s adds its own.
func shapeSubset(tmpl *corev1.PodTemplateSpec, s *musterv1.WorkloadSpreadSubset) (templates.Subset, *corev1.PodTemplateSpec, error) {
	subset := templates.Subset{Spec: s}
	patched, err := workloadspread.Inject(tmpl, &musterv1.WorkloadSpreadSubset{Name: s.Name, Patch: s.Patch})
	if err != nil {
		return subset, nil, err
	}
	subset.Tolerations = len(patched.Spec.Tolerations)
	if a := patched.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		subset.Preferred = len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	pods, err := workloadspread.Inject(tmpl, s)
	return subset, pods, err
}

// targets says whether ws spreads fj, as the FleetJob controller reads it.
func targets(ws *musterv1.WorkloadSpread, fj *musterv1.FleetJob) bool {
	ref := ws.Spec.TargetReference
	return ws.DeletionTimestamp == nil && ws.Namespace == fj.Namespace &&
		ref.Kind == "FleetJob" && ref.APIVersion == musterv1.GroupVersion.String() && ref.Name == fj.Name
}

// spreadOf reads, from the API server, the WorkloadSpread that spreads fj; nil when none
// does.
func spreadOf(ctx context.Context, reader client.Reader, fj *musterv1.FleetJob) (*musterv1.WorkloadSpread, error) {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var list musterv1.WorkloadSpreadList
	if err := reader.List(callCtx, &list, client.InNamespace(fj.Namespace)); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("listing WorkloadSpreads: %w", err))
	}
	for i := range list.Items {
		if targets(&list.Items[i], fj) {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// targetOf reads, from the API server, the FleetJob ws spreads; nil when it does not
// exist yet (it is checked against ws when it is created) or is being deleted.
func targetOf(ctx context.Context, reader client.Reader, ws *musterv1.WorkloadSpread) (*musterv1.FleetJob, error) {
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var fj musterv1.FleetJob
	err := reader.Get(callCtx, client.ObjectKey{Namespace: ws.Namespace, Name: ws.Spec.TargetReference.Name}, &fj)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("reading FleetJob %s: %w", ws.Spec.TargetReference.Name, err))
	}
	if fj.DeletionTimestamp != nil || !targets(ws, &fj) {
		return nil, nil
	}
	return &fj, nil
}
