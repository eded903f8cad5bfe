package registration

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/binding"
	"github.com/musterhq/muster/internal/patch"
)

// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,resourceNames=kubernetes.io/kube-apiserver-client,verbs=approve

// Approver approves agent certificate requests that Decide allows.
type Approver struct {
	Client client.Client
	// Clientset updates the approval subresource, which controller-runtime's client does
	// not expose.
	Clientset  kubernetes.Interface
	AutoAccept bool
	// APIReader, if set, reads the MemberCluster uncached before a denial.
	APIReader client.Reader
	// Recorder reports denied requests on their MemberCluster.
	Recorder events.EventRecorder
	// MaxCertificateLifetime is the longest certificate approved (zero:
	// DefaultMaxCertificateLifetime); requests for longer or unbounded ones are denied.
	MaxCertificateLifetime time.Duration
}

// SetupWithManager registers the approver. Accepting a cluster re-examines its pending
// requests, so a join does not wait for the next resync.
func (a *Approver) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("csr-approver").
		For(&certificatesv1.CertificateSigningRequest{}, builder.WithPredicates(clientSignerOnly)).
		Watches(&musterv1.MemberCluster{}, handler.EnqueueRequestsFromMapFunc(a.pendingRequestsOf)).
		Complete(a)
}

// clientSignerOnly skips CSRs for other signers: kubelets' and everyone else's.
var clientSignerOnly = predicate.NewPredicateFuncs(func(o client.Object) bool {
	csr, ok := o.(*certificatesv1.CertificateSigningRequest)
	return ok && csr.Spec.SignerName == certificatesv1.KubeAPIServerClientSignerName
})

// pendingRequestsOf maps a MemberCluster to the CSRs labelled with its name.
func (a *Approver) pendingRequestsOf(ctx context.Context, o client.Object) []ctrl.Request {
	var csrs certificatesv1.CertificateSigningRequestList
	if err := a.Client.List(ctx, &csrs, client.MatchingLabels{musterv1.ClusterNameLabel: o.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing CSRs of cluster", "cluster", o.GetName())
		return nil
	}
	reqs := make([]ctrl.Request, 0, len(csrs.Items))
	for _, c := range csrs.Items {
		reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Name: c.Name}})
	}
	return reqs
}

// Reconcile decides one CSR.
func (a *Approver) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var csr certificatesv1.CertificateSigningRequest
	if err := a.Client.Get(ctx, req.NamespacedName, &csr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	agentReq, err := identity.ParseAgentCSR(&csr)
	if err != nil {
		return ctrl.Result{}, nil
	}
	cluster := agentReq.Cluster
	var mc musterv1.MemberCluster
	exists, v, err := a.decide(ctx, a.Client, &csr, cluster, &mc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if v.Decision == identity.Deny && a.APIReader != nil {
		// A denial is final: decide it again on the request and the MemberCluster as they
		// are now, not as the cache last saw them (a request approved meanwhile is left
		// alone, and a rotation that just moved the key must not deny the next one).
		if err := a.APIReader.Get(ctx, req.NamespacedName, &csr); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if exists, v, err = a.decide(ctx, a.APIReader, &csr, cluster, &mc); err != nil {
			return ctrl.Result{}, err
		}
	}
	logger := log.FromContext(ctx).WithValues("csr", csr.Name, "cluster", cluster)
	switch v.Decision {
	case identity.Deny:
		return a.deny(ctx, &csr, v, exists, &mc)
	case identity.Approve:
	default:
		return ctrl.Result{}, nil
	}
	if err := binding.Bind(ctx, a.Client, &mc, &csr); err != nil {
		return patch.Requeue(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, identity.ApprovalCondition(musterv1.CSRReasonApprovedByHub, v.Why))
	if _, err := a.Clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, &csr, metav1.UpdateOptions{}); err != nil {
		return patch.Requeue(fmt.Errorf("approving CSR %s: %w", csr.Name, err))
	}
	logger.Info("approved agent certificate", "why", v.Why, "key", mc.Annotations[identity.AgentKeyAnnotation], "join", mc.Annotations[identity.AgentJoinAnnotation])
	return ctrl.Result{}, nil
}

// deny records the denial on the request and, when its cluster exists, a Warning event on
// the MemberCluster.
func (a *Approver) deny(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, v identity.Verdict, exists bool, mc *musterv1.MemberCluster) (ctrl.Result, error) {
	csr.Status.Conditions = append(csr.Status.Conditions, identity.DenialCondition(v.Reason, v.Why))
	if _, err := a.Clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
		// A conflict: another approver (`musterctl accept`) decided the request first;
		// it is looked at again once the cache has caught up.
		return patch.Requeue(fmt.Errorf("denying CSR %s: %w", csr.Name, err))
	}
	if exists && a.Recorder != nil {
		a.Recorder.Eventf(mc, nil, corev1.EventTypeWarning, v.Reason, "DenyCertificate", "denied certificate request %s by %s: %s", csr.Name, csr.Spec.Username, v.Why)
	}
	log.FromContext(ctx).Info("denied agent certificate", "csr", csr.Name, "requester", csr.Spec.Username, "reason", v.Reason, "why", v.Why)
	return ctrl.Result{}, nil
}

// decide reads the cluster's MemberCluster into mc through r and applies the policy.
func (a *Approver) decide(ctx context.Context, r client.Reader, csr *certificatesv1.CertificateSigningRequest, cluster string, mc *musterv1.MemberCluster) (bool, identity.Verdict, error) {
	facts := identity.Facts{AutoAccept: a.AutoAccept, MaxLifetime: a.MaxCertificateLifetime}
	exists := false
	if err := r.Get(ctx, types.NamespacedName{Name: cluster}, mc); err == nil {
		exists = true
		facts.Accepted = mc.Spec.Accepted && mc.DeletionTimestamp.IsZero()
		facts.BoundKey = mc.Annotations[identity.AgentKeyAnnotation]
		facts.JoinID = mc.Annotations[identity.AgentJoinAnnotation]
	} else if client.IgnoreNotFound(err) != nil {
		return false, identity.Verdict{}, fmt.Errorf("reading MemberCluster %s: %w", cluster, err)
	}
	return exists, identity.Decide(csr, facts), nil
}
