package attacks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/internal/testing/builders"
)

// Check is one attack with its outcome: Run says why the attack was not refused as it must
// be (nil when it was).
type Check struct {
	Name string
	Run  func(context.Context) error
}

// Hub is what the join rows need of a fleet's hub.
type Hub struct {
	// Admin is the hub admin's client, which watches the attacker's requests being decided.
	Admin *framework.Cluster
	// JoinArgs is the join line `musterctl init` printed.
	JoinArgs []string
	// Musterctl runs musterctl against the hub.
	Musterctl func(ctx context.Context, args ...string) (string, error)
	// Member is a joined member whose MemberCluster the attacker tries to read.
	Member string
}

// JoinToken is the bootstrap token of a join line.
func JoinToken(args []string) (string, error) {
	for i, a := range args {
		if a == "--hub-token" && i+1 < len(args) {
			return args[i+1], nil
		}
	}
	return "", fmt.Errorf("no --hub-token in %v", args)
}

// TokenClient is a hub client that authenticates with a bootstrap token and nothing else.
func TokenClient(hub *framework.Cluster, token string) (client.Client, error) {
	cfg := rest.AnonymousClientConfig(hub.Config)
	cfg.BearerToken = token
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

// JoinTokenAndCertificate are the rows of a leaked join line: it reads no MemberCluster,
// a token bound to one cluster reads no other, it cannot register a cluster labelled
// env=prod, and the hub denies its requests for certificates longer than its maximum.
func JoinTokenAndCertificate(h Hub) []Check {
	initToken := func() (client.Client, error) {
		token, err := JoinToken(h.JoinArgs)
		if err != nil {
			return nil, err
		}
		return TokenClient(h.Admin, token)
	}
	return []Check{
		{Name: "the join token of musterctl init reads no MemberCluster", Run: func(ctx context.Context) error {
			boot, err := initToken()
			if err != nil {
				return err
			}
			return errors.Join(
				prefix("get "+h.Member, Forbidden(boot.Get(ctx, types.NamespacedName{Name: h.Member}, &musterv1.MemberCluster{}))),
				prefix("list MemberClusters", Forbidden(boot.List(ctx, &musterv1.MemberClusterList{}))))
		}},
		{Name: "a token bound to one cluster reads no other MemberCluster", Run: func(ctx context.Context) error {
			out, err := h.Musterctl(ctx, "token", "create", "--cluster", "attacks-elsewhere")
			if err != nil {
				return err
			}
			token, err := JoinToken(strings.Fields(out))
			if err != nil {
				return err
			}
			boot, err := TokenClient(h.Admin, token)
			if err != nil {
				return err
			}
			return prefix("get "+h.Member+" with a token bound to attacks-elsewhere", Forbidden(boot.Get(ctx, types.NamespacedName{Name: h.Member}, &musterv1.MemberCluster{})))
		}},
		{Name: "a bootstrap MemberCluster labelled env=prod is refused", Run: func(ctx context.Context) error {
			boot, err := initToken()
			if err != nil {
				return err
			}
			mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "intruder", Labels: map[string]string{"env": "prod", "region": "eu-west"}}}
			err = boot.Create(ctx, mc)
			if err == nil {
				_ = h.Admin.Client.Delete(context.WithoutCancel(ctx), mc)
				return errors.New("the join token created a MemberCluster labelled env=prod")
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				return fmt.Errorf("create a labelled MemberCluster with the join token: got %w, want it refused", err)
			}
			if !strings.Contains(err.Error(), "may not set labels") {
				return fmt.Errorf("refusal %q does not say labels are the administrator's", err.Error())
			}
			return nil
		}},
		{Name: "a CSR asking for a year is denied", Run: func(ctx context.Context) error {
			return deniedLifetime(ctx, h, initToken, ptrTo(int32(365*24*3600)))
		}},
		{Name: "a CSR asking for no lifetime is denied", Run: func(ctx context.Context) error {
			return deniedLifetime(ctx, h, initToken, nil)
		}},
	}
}

func deniedLifetime(ctx context.Context, h Hub, boot func() (client.Client, error), seconds *int32) error {
	c, err := boot()
	if err != nil {
		return err
	}
	csr, err := AgentCSR("attacks-lifetime", "", nil)
	if err != nil {
		return err
	}
	csr.Spec.ExpirationSeconds = seconds
	return Denied(ctx, c, h.Admin.Client, csr, musterv1.ReasonCertificateLifetime)
}

func ptrTo[T any](v T) *T { return &v }

func prefix(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// AgentCSR asks for a certificate of join joinID (a fresh one when empty) of cluster's
// agent identity with a fresh key, for an hour, shaped as an agent's request is.
func AgentCSR(cluster, joinID string, annotations map[string]string) (*certificatesv1.CertificateSigningRequest, error) {
	if joinID == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, err
		}
		joinID = hex.EncodeToString(b)
	}
	request, err := identity.NewAgentRequest(cluster, joinID, builders.NewKey())
	if err != nil {
		return nil, err
	}
	return builders.MakeCSR("attack-").Label(musterv1.ClusterNameLabel, cluster).Annotations(annotations).Request(request).Obj(), nil
}

// Denied creates csr as the attacker and waits, as the hub admin, for the hub to deny it
// with reason (any when empty); it fails if csr is ever approved or issued. An attacker
// refused the create outright (Forbidden) is denied too.
func Denied(ctx context.Context, attacker, admin client.Client, csr *certificatesv1.CertificateSigningRequest, reason string) error {
	if err := attacker.Create(ctx, csr); err != nil {
		if apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("creating the CSR: %w", err)
	}
	return framework.Until(ctx, 30*time.Second, "CSR "+csr.Name+" to be denied", func(ctx context.Context) (bool, string, error) {
		var got certificatesv1.CertificateSigningRequest
		if err := admin.Get(ctx, types.NamespacedName{Name: csr.Name}, &got); err != nil {
			return false, err.Error(), nil
		}
		return csrDenied(&got, reason)
	})
}

// csrDenied says whether csr is denied with reason (any when empty), and fails when it was
// approved, issued, or denied for another reason.
func csrDenied(csr *certificatesv1.CertificateSigningRequest, reason string) (bool, string, error) {
	if len(csr.Status.Certificate) > 0 {
		return false, "", fmt.Errorf("CSR %s was issued a certificate", csr.Name)
	}
	for _, c := range csr.Status.Conditions {
		switch {
		case c.Type == certificatesv1.CertificateApproved:
			return false, "", fmt.Errorf("CSR %s was approved: %s", csr.Name, c.Message)
		case c.Type == certificatesv1.CertificateDenied && c.Status == corev1.ConditionTrue:
			if reason != "" && c.Reason != reason {
				return false, "", fmt.Errorf("CSR %s was denied with reason %s (%s), want %s", csr.Name, c.Reason, c.Message, reason)
			}
			return true, "", nil
		}
	}
	return false, "pending", nil
}
