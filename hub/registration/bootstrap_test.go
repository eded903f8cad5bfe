package registration_test

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/identity"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/hub/registration"
	"github.com/musterhq/muster/internal/testing/builders"
)

// What a bootstrap token may put on the MemberCluster it registers: a name and the agent's
// cluster ID; labels select placement and are the hub administrator's, so a leaked join
// line cannot attract another team's env=prod work.
func TestBootstrapRegistersOnlyAPlainCluster(t *testing.T) {
	boot := bootstrapClient(t)
	refused := map[string]*musterv1.MemberCluster{
		"labels env=prod":    {ObjectMeta: metav1.ObjectMeta{Name: "intruder", Labels: map[string]string{"env": "prod", "region": "eu-west"}}},
		"a muster.dev label": {ObjectMeta: metav1.ObjectMeta{Name: "intruder", Labels: map[string]string{musterv1.ClusterNameLabel: "intruder"}}},
		"a recorded join":    {ObjectMeta: metav1.ObjectMeta{Name: "intruder", Annotations: map[string]string{identity.AgentJoinAnnotation: newJoinID(t)}}},
		"a bound key":        {ObjectMeta: metav1.ObjectMeta{Name: "intruder", Annotations: map[string]string{identity.AgentKeyAnnotation: "sha256:00"}}},
		"another annotation": {ObjectMeta: metav1.ObjectMeta{Name: "intruder", Annotations: map[string]string{"placement.example/tier": "gold"}}},
		"accepted":           {ObjectMeta: metav1.ObjectMeta{Name: "intruder"}, Spec: musterv1.MemberClusterSpec{Accepted: true}},
	}
	for name, mc := range refused {
		t.Run(name, func(t *testing.T) {
			err := boot.Create(t.Context(), mc)
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				t.Errorf("bootstrap create with %s: got %v, want refusal", name, err)
			}
		})
	}
	t.Run("control: a plain registration with the cluster ID", func(t *testing.T) {
		mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "plain", Annotations: map[string]string{"muster.dev/cluster-id": "uid-1"}}}
		if err := boot.Create(t.Context(), mc); err != nil {
			t.Errorf("plain bootstrap registration: %v", err)
		}
	})
}

// A bootstrap token reads no MemberCluster, except that a token bound to one cluster
// (musterctl token create --cluster) reads that one: a re-join checks it is its own.
func TestBootstrapReadsOnlyTheClusterItsTokenNames(t *testing.T) {
	newCluster(t, "xi-other", false)
	newCluster(t, "xi", false)
	ctx := t.Context()
	unbound, bound := bootstrapClient(t), bootstrapClient(t, identity.TokenClusterGroupPrefix+"xi")
	eventually(t, "the token bound to xi to read xi", func(ctx context.Context) (bool, error) {
		err := bound.Get(ctx, types.NamespacedName{Name: "xi"}, &musterv1.MemberCluster{})
		return err == nil, nil
	})
	cases := map[string]error{
		"an unbound token gets another cluster":  unbound.Get(ctx, types.NamespacedName{Name: "xi-other"}, &musterv1.MemberCluster{}),
		"an unbound token gets xi":               unbound.Get(ctx, types.NamespacedName{Name: "xi"}, &musterv1.MemberCluster{}),
		"a token bound to xi gets another":       bound.Get(ctx, types.NamespacedName{Name: "xi-other"}, &musterv1.MemberCluster{}),
		"a token bound to xi lists clusters":     bound.List(ctx, &musterv1.MemberClusterList{}),
		"an unbound token lists clusters":        unbound.List(ctx, &musterv1.MemberClusterList{}),
		"a token bound to xi gets a missing one": bound.Get(ctx, types.NamespacedName{Name: "xi-missing"}, &musterv1.MemberCluster{}),
	}
	for name, err := range cases {
		t.Run(name, func(t *testing.T) {
			if !apierrors.IsForbidden(err) {
				t.Errorf("got %v, want Forbidden", err)
			}
		})
	}
	var reader rbacv1.ClusterRole
	if err := env.Client.Get(ctx, types.NamespacedName{Name: registration.BootstrapReaderName("xi")}, &reader); err != nil {
		t.Fatal(err)
	}
	if len(reader.OwnerReferences) != 1 || reader.OwnerReferences[0].Name != "xi" {
		t.Errorf("the reader role of xi is owned by %+v, want MemberCluster xi (deleted with it)", reader.OwnerReferences)
	}
}

// An agent reports on its cluster through status only: the status subresource drops what
// it writes to metadata, so it cannot label itself into placements either.
func TestAgentCannotLabelItsCluster(t *testing.T) {
	joinID := boundCluster(t, "omicron", builders.NewKey())
	agent := certificateClient(t, "omicron", joinID)
	mc := &musterv1.MemberCluster{ObjectMeta: metav1.ObjectMeta{Name: "omicron"}}
	labels := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"env":"prod"}}}`))
	if err := agent.Patch(t.Context(), mc, labels); !apierrors.IsForbidden(err) {
		t.Errorf("agent patching its labels: got %v, want Forbidden", err)
	}
	withStatus := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"env":"prod"}},"status":{"version":"v1.36.3"}}`))
	eventually(t, "the agent's status patch", func(ctx context.Context) (bool, error) {
		err := agent.Status().Patch(ctx, mc, withStatus)
		return err == nil, nil
	})
	got, err := getCluster(t.Context(), "omicron")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Version != "v1.36.3" || got.Labels["env"] != "" {
		t.Errorf("after the agent's status patch: version %q, labels %v; want the version only", got.Status.Version, got.Labels)
	}
}
