package registration

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
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
	if err := a.Client.List(ctx, &csrs, client.MatchingLabels{ClusterLabel: o.GetName()}); err != nil {
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
	cluster, err := ParseAgentCSR(&csr)
	if err != nil {
		return ctrl.Result{}, nil
	}
	var mc musterv1.MemberCluster
	accepted := false
	if err := a.Client.Get(ctx, types.NamespacedName{Name: cluster}, &mc); err == nil {
		accepted = mc.Spec.Accepted && mc.DeletionTimestamp.IsZero()
	} else if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	decision, why := Decide(&csr, accepted, a.AutoAccept, false)
	if decision != Approve {
		return ctrl.Result{}, nil
	}
	csr.Status.Conditions = append(csr.Status.Conditions, ApprovalCondition("MusterHubApproved", why))
	if _, err := a.Clientset.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, &csr, metav1.UpdateOptions{}); err != nil {
		return ctrl.Result{}, fmt.Errorf("approving CSR %s: %w", csr.Name, err)
	}
	log.FromContext(ctx).Info("approved agent certificate", "csr", csr.Name, "cluster", cluster, "why", why)
	return ctrl.Result{}, nil
}
