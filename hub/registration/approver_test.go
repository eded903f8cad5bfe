package registration_test

import (
	"context"
	"fmt"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/binding"
	"github.com/musterhq/muster/internal/testing/builders"
)

func TestRotationByTheCurrentHolderIsApprovedAndMovesTheKey(t *testing.T) {
	current := builders.NewKey()
	joinID := boundCluster(t, "gamma", current)
	agent, cert := asAgent(t, "gamma", joinID, current)
	next := builders.NewKey()
	req := agentCSRFor(t, "gamma", joinID, next)
	req.Annotations = cert
	renewal := createCSR(t, agent, req)
	eventually(t, "the renewal to be approved", func(ctx context.Context) (bool, error) { return approved(ctx, renewal.Name) })
	if got, err := boundKey(t.Context(), "gamma"); err != nil || got != fingerprint(next) {
		t.Errorf("bound key after rotation = %q (%v), want the new key %s", got, err, fingerprint(next))
	}

	// The old certificate no longer rotates: its key is not the cluster's any more.
	stale, cert := asAgent(t, "gamma", joinID, current)
	req = agentCSRFor(t, "gamma", joinID, builders.NewKey())
	req.Annotations = cert
	forged := createCSR(t, stale, req)
	eventually(t, "the rotation with the old certificate to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, forged.Name)
		return reason == musterv1.ReasonAgentKeyMismatch, err
	})

	// A bootstrap join with the cluster's bound key still waits for musterctl accept.
	join := createCSR(t, asBootstrap(t), agentCSRFor(t, "gamma", newJoinID(t), next))
	approverPassed(t, "gamma")
	if ok, err := approved(t.Context(), join.Name); err != nil || ok {
		t.Errorf("a bootstrap join was approved without musterctl accept (approved=%v, err=%v)", ok, err)
	}
}

// The takeover of issue 14: another cluster's bootstrap token asks for an accepted, joined
// cluster's identity with its own key.
func TestTakeoverJoinIsDeniedWithAnEvent(t *testing.T) {
	owner := builders.NewKey()
	joinID := boundCluster(t, "zeta", owner)
	takeover := createCSR(t, asBootstrap(t), agentCSR(t, "zeta"))
	eventually(t, "the takeover to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, takeover.Name)
		return reason == musterv1.ReasonAgentKeyMismatch, err
	})
	expectEvent(t, "zeta", musterv1.ReasonAgentKeyMismatch, takeover.Name)
	// What musterctl accept decides for it, even when run again: refuse.
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(t.Context(), types.NamespacedName{Name: takeover.Name}, &csr); err != nil {
		t.Fatal(err)
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
	if v := identity.Decide(&csr, identity.Facts{Accepted: true, ByAdmin: true, BoundKey: fingerprint(owner), JoinID: joinID}); v.Decision != identity.Deny {
		t.Errorf("musterctl accept would decide %s (%s) for the takeover, want Deny", v.Decision, v.Why)
	}
	if got, _ := boundKey(t.Context(), "zeta"); got != fingerprint(owner) {
		t.Errorf("bound key = %q, want the owner's", got)
	}
}

// A token bound to one cluster cannot ask for another's identity, bound or not.
func TestClusterBoundTokenIsDeniedForAnotherName(t *testing.T) {
	newCluster(t, "eta", true)
	csr := createCSR(t, asBootstrap(t, identity.TokenClusterGroupPrefix+"theta"), agentCSR(t, "eta"))
	eventually(t, "the request to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, csr.Name)
		return reason == musterv1.ReasonAgentKeyMismatch, err
	})
}

// An administrator replacing a lost key (musterctl accept --rekey) binds the new key and a
// new join: the lost key's certificate can then neither rotate nor reach anything, and the
// new agent can.
func TestRekeyReplacesTheBoundKeyAndJoin(t *testing.T) {
	lost := builders.NewKey()
	lostJoin := boundCluster(t, "iota", lost)
	fresh, freshJoin := builders.NewKey(), newJoinID(t)
	join := createCSR(t, asBootstrap(t), agentCSRFor(t, "iota", freshJoin, fresh))
	// The hub denies the unknown key on its own; an administrator's rekey is what lets a
	// new key in, decided on the request as it was pending.
	ctx := t.Context()
	var csr certificatesv1.CertificateSigningRequest
	if err := env.Client.Get(ctx, types.NamespacedName{Name: join.Name}, &csr); err != nil {
		t.Fatal(err)
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
	mc, err := getCluster(ctx, "iota")
	if err != nil {
		t.Fatal(err)
	}
	facts := identity.Facts{Accepted: true, ByAdmin: true, BoundKey: mc.Annotations[identity.AgentKeyAnnotation], JoinID: lostJoin}
	if v := identity.Decide(&csr, facts); v.Decision != identity.Deny {
		t.Fatalf("without --rekey the new key is %s, want Deny", v.Decision)
	}
	facts.Rekey = true
	if v := identity.Decide(&csr, facts); v.Decision != identity.Approve {
		t.Fatalf("with --rekey the new key is %s (%s), want Approve", v.Decision, v.Why)
	}
	if err := binding.Bind(ctx, env.Client, mc, &csr); err != nil {
		t.Fatal(err)
	}
	if got, _ := boundKey(ctx, "iota"); got != fingerprint(fresh) {
		t.Fatalf("bound key after rekey = %q, want %s", got, fingerprint(fresh))
	}
	eventually(t, "iota's RBAC to move to the new join", func(ctx context.Context) (bool, error) {
		return bindsJoin(ctx, "iota", freshJoin), nil
	})
	newAgent, newCert := asAgent(t, "iota", freshJoin, fresh)
	req := agentCSRFor(t, "iota", freshJoin, builders.NewKey())
	req.Annotations = newCert
	renewal := createCSR(t, newAgent, req)
	eventually(t, "the new key's rotation approved", func(ctx context.Context) (bool, error) { return approved(ctx, renewal.Name) })
	oldAgent, _ := asAgent(t, "iota", lostJoin, lost)
	_, err = oldAgent.CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSRFor(t, "iota", lostJoin, builders.NewKey()), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("the lost key's certificate renewing: got %v, want Forbidden", err)
	}
}

func TestAnotherClustersAgentCannotGetACertificate(t *testing.T) {
	deltaJoin := boundCluster(t, "delta", builders.NewKey())
	boundCluster(t, "epsilon", builders.NewKey())
	ctx := t.Context()
	// delta's agent asks for epsilon's identity.
	csr, err := asUser(t, identity.AgentUser("delta"), agentGroups("delta", deltaJoin)...).
		CertificatesV1().CertificateSigningRequests().Create(ctx, agentCSR(t, "epsilon"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the request to be denied", func(ctx context.Context) (bool, error) {
		reason, err := deniedFor(ctx, csr.Name)
		return reason != "", err
	})
	if ok, err := approved(ctx, csr.Name); err != nil || ok {
		t.Errorf("delta's agent got epsilon's identity approved (approved=%v, err=%v)", ok, err)
	}
}

// `musterctl accept` and the hub's approver both decide rotations, and each binds the
// request's key before approving it. When one has bound the key and the other looks before
// the approval lands, the request's key is the bound key while the certificate it presents
// is the previous one: that request must be approved. Denying it (as the holder check alone
// would) leaves the cluster bound to a key its agent never gets a certificate for, and
// every later rotation of the agent is denied: the agent loses its identity.
func TestRotationWhoseKeyIsAlreadyBoundIsApproved(t *testing.T) {
	ctx := t.Context()
	current := builders.NewKey()
	joinID := boundCluster(t, "kappa", current)
	agent, cert := asAgent(t, "kappa", joinID, current)
	next := builders.NewKey()
	req := agentCSRFor(t, "kappa", joinID, next)
	req.Annotations = cert
	// The other approver's first step, bind the request's key, done before the hub's
	// approver sees the request.
	mc, err := getCluster(ctx, "kappa")
	if err != nil {
		t.Fatal(err)
	}
	if err := binding.Bind(ctx, env.Client, mc, req); err != nil {
		t.Fatal(err)
	}
	renewal := createCSR(t, agent, req)
	eventually(t, "the rotation to be approved", func(ctx context.Context) (bool, error) {
		if reason, err := deniedFor(ctx, renewal.Name); err != nil || reason != "" {
			return false, fmt.Errorf("the rotation was denied: %s: %w", reason, err)
		}
		return approved(ctx, renewal.Name)
	})
}

// An agent reads only the certificate requests whose names it knows, its own: it may not
// list or watch them, which would show every cluster's.
func TestAgentCannotListCertificateRequests(t *testing.T) {
	joinID := boundCluster(t, "lambda", builders.NewKey())
	ctx := t.Context()
	agent := asUser(t, identity.AgentUser("lambda"), agentGroups("lambda", joinID)...)
	csrs := agent.CertificatesV1().CertificateSigningRequests()
	eventually(t, "the agent to be able to create and read its own request", func(ctx context.Context) (bool, error) {
		own, err := csrs.Create(ctx, agentCSR(t, "lambda"), metav1.CreateOptions{})
		if apierrors.IsForbidden(err) { // the RBAC is not yet in the authorizer's cache
			return false, nil
		}
		if err != nil {
			return false, err
		}
		_, err = csrs.Get(ctx, own.Name, metav1.GetOptions{})
		return err == nil, err
	})
	if _, err := csrs.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list CSRs as an agent: got %v, want Forbidden", err)
	}
	if w, err := csrs.Watch(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		if w != nil {
			w.Stop()
		}
		t.Errorf("watch CSRs as an agent: got %v, want Forbidden", err)
	}
}

// A certificate lasts at most the hub's maximum (24h by default): a join asking for a year,
// or for no lifetime at all (the signer's maximum, a year by default), is denied at once,
// with a warning event on the cluster, even before anyone accepts it.
func TestLongCertificatesAreDenied(t *testing.T) {
	newCluster(t, "mu", false)
	year := int32(365 * 24 * 3600)
	cases := map[string]*int32{"a year": &year, "no lifetime": nil}
	for name, lifetime := range cases {
		t.Run(name, func(t *testing.T) {
			req := agentCSR(t, "mu")
			req.Spec.ExpirationSeconds = lifetime
			csr := createCSR(t, asBootstrap(t), req)
			eventually(t, "the request to be denied", func(ctx context.Context) (bool, error) {
				reason, err := deniedFor(ctx, csr.Name)
				return reason == musterv1.ReasonCertificateLifetime, err
			})
			expectEvent(t, "mu", musterv1.ReasonCertificateLifetime, csr.Name)
		})
	}
	// The control: a day is within the maximum, and waits for musterctl accept.
	day := createCSR(t, asBootstrap(t), agentCSR(t, "mu"))
	approverPassed(t, "mu")
	if reason, err := deniedFor(t.Context(), day.Name); err != nil || reason != "" {
		t.Errorf("a join for an hour was denied: %s (%v)", reason, err)
	}
}

// The attack of issue 28: deny a cluster, accept it again, and the certificates issued
// before must stay useless, while a new join (same key, no --rekey) works. The clients
// authenticate with real client certificates, as agents do.
func TestOldCertificateIsForbiddenAfterDenyAndRejoin(t *testing.T) {
	ctx := t.Context()
	key := builders.NewKey()
	newCluster(t, "nu", true)
	first := newJoinID(t)
	adminApprove(t, createCSR(t, asBootstrap(t), agentCSRFor(t, "nu", first, key)).Name, false)
	old := certificateClient(t, "nu", first)
	eventually(t, "the first join's certificate to reach nu's Works and Lease", func(ctx context.Context) (bool, error) {
		return reaches(ctx, old, "nu") == nil, nil
	})

	setAccepted(t, "nu", false)
	eventually(t, "Accepted=False, and the old certificate Forbidden", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "nu")
		return c != nil && c.Status == metav1.ConditionFalse && apierrors.IsForbidden(reaches(ctx, old, "nu")), err
	})
	setAccepted(t, "nu", true)
	eventually(t, "Accepted=True again", func(ctx context.Context) (bool, error) {
		c, err := acceptedCondition(ctx, "nu")
		return c != nil && c.Status == metav1.ConditionTrue, err
	})
	if err := reaches(ctx, old, "nu"); !apierrors.IsForbidden(err) {
		t.Fatalf("the old certificate after deny and accept: got %v, want Forbidden", err)
	}

	second := newJoinID(t)
	adminApprove(t, createCSR(t, asBootstrap(t), agentCSRFor(t, "nu", second, key)).Name, false)
	renewed := certificateClient(t, "nu", second)
	eventually(t, "the new join's certificate to reach nu's Works and Lease", func(ctx context.Context) (bool, error) {
		return reaches(ctx, renewed, "nu") == nil, nil
	})
	if err := reaches(ctx, old, "nu"); !apierrors.IsForbidden(err) {
		t.Errorf("the old certificate after the new join: got %v, want Forbidden", err)
	}
	if got, _ := boundKey(ctx, "nu"); got != fingerprint(key) {
		t.Errorf("bound key = %q, want the agent's one key (no --rekey)", got)
	}
	// The old join's holder cannot renew into the new join either.
	oldAgent, cert := asAgent(t, "nu", first, key)
	req := agentCSRFor(t, "nu", second, builders.NewKey())
	req.Annotations = cert
	if _, err := oldAgent.CertificatesV1().CertificateSigningRequests().Create(ctx, req, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the old certificate asking for a renewal: got %v, want Forbidden", err)
	}
}

// reaches reads what an agent works with: its Works, its Lease and its MemberCluster; the
// first refusal is returned.
func reaches(ctx context.Context, c client.Reader, cluster string) error {
	ns := musterv1.MemberNamespace(cluster)
	if err := c.List(ctx, &musterv1.WorkList{}, client.InNamespace(ns)); err != nil {
		return err
	}
	err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "muster-agent"}, &coordinationv1.Lease{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return c.Get(ctx, types.NamespacedName{Name: cluster}, &musterv1.MemberCluster{})
}
