package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/bootstrap"
)

// InClusterOptions say how Muster is installed into the clusters themselves.
type InClusterOptions struct {
	// HubImage and AgentImage are the images of the hub and agent Deployments; they must
	// already be in the clusters' nodes.
	HubImage, AgentImage string
	// HubArgs are extra flags for muster-hub (musterctl init --hub-arg).
	HubArgs []string
	// HubAPIServer is the hub's address as members' pods reach it; it replaces the one in
	// the join line init prints, which names the address in the hub's own cluster-info.
	HubAPIServer string
	// Helm installs the hub, and the first member's agent, with their Helm charts (helm
	// install of deploy/charts, the agent's join line as values, as a GitOps tool would);
	// the other members join with musterctl join, so that both ways are installed.
	Helm bool
}

// InstallInCluster installs Muster as users do: `musterctl init --image` deploys the hub,
// `musterctl join --image` the agent of every member, `musterctl accept` admits them; it
// returns once every member is Joined and Available and its nodes are in the hub
// inventory. Nothing runs as a process but musterctl.
func InstallInCluster(ctx context.Context, f *Fleet, opts InClusterOptions) (*Muster, error) {
	bin, err := BuildBinaries(ctx, filepath.Join(f.Dir, "bin"))
	if err != nil {
		return nil, err
	}
	m := &Muster{Fleet: f, Bin: bin, Agents: map[string]*Process{}, Hubs: map[string]*Process{}, HelmReleases: map[string]string{}}
	out, err := installHub(ctx, m, opts)
	if err != nil {
		return nil, err
	}
	match := joinLine.FindStringSubmatch(out)
	if match == nil {
		return nil, fmt.Errorf("musterctl printed no join command:\n%s", out)
	}
	m.JoinArgs = withFlag(strings.Fields(match[1]), "--hub-apiserver", opts.HubAPIServer)
	for i, member := range f.Members {
		if opts.Helm && i == 0 {
			err = helmInstallAgent(ctx, m, member, opts.AgentImage)
		} else {
			args := append(append([]string{}, m.JoinArgs...), "--cluster-name", member.Name, "--image", opts.AgentImage)
			_, err = m.Musterctl(ctx, member, args...)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, member := range f.Members {
		// The agent registers and asks for its identity once its pod runs: accept waits.
		if _, err := m.Musterctl(ctx, f.Hub, "accept", member.Name, "--wait", "3m"); err != nil {
			return nil, err
		}
	}
	for _, member := range f.Members {
		for _, cond := range []string{musterv1.MemberClusterJoined, musterv1.MemberClusterAvailable} {
			if _, err := WaitForClusterCondition(ctx, f.Hub, member.Name, cond, metav1.ConditionTrue, 3*time.Minute); err != nil {
				return nil, err
			}
		}
		if err := WaitForNodeInventory(ctx, f.Hub, member, time.Minute); err != nil {
			return nil, err
		}
	}
	// The members turn Available as soon as the leading hub's controllers run, which can
	// be before a hub pod is Ready and the webhook Service has an endpoint: until then
	// every create of a Muster object is refused ("connection refused").
	if err := waitForAdmission(ctx, f.Hub, f.Members[0].Name, 2*time.Minute); err != nil {
		return nil, err
	}
	return m, nil
}

// installHub installs the hub with musterctl init, or with helm install and a token from
// musterctl token create, and returns the output that prints the join line.
func installHub(ctx context.Context, m *Muster, opts InClusterOptions) (string, error) {
	hub := m.Fleet.Hub
	if !opts.Helm {
		args := []string{"init", "--image", opts.HubImage}
		for _, a := range opts.HubArgs {
			args = append(args, "--hub-arg="+a)
		}
		return m.Musterctl(ctx, hub, args...)
	}
	values := map[string]any{"image": ImageValues(opts.HubImage), "extraArgs": opts.HubArgs}
	if _, err := m.HelmInstall(ctx, hub, HubRelease, values); err != nil {
		return "", err
	}
	return m.Musterctl(ctx, hub, "token", "create")
}

// helmInstallAgent installs member's agent with the muster-agent chart, its join line
// (hub URL, CA hash, token) as values.
func helmInstallAgent(ctx context.Context, m *Muster, member *Cluster, image string) error {
	values := map[string]any{
		"image":       ImageValues(image),
		"clusterName": member.Name,
		"hub":         map[string]any{"url": bootstrap.JoinFlag(m.JoinArgs, "--hub-apiserver"), "caHash": bootstrap.JoinFlag(m.JoinArgs, "--hub-ca-hash")},
		"bootstrap":   map[string]any{"token": bootstrap.JoinFlag(m.JoinArgs, "--hub-token")},
	}
	_, err := m.HelmInstall(ctx, member, AgentRelease, values)
	return err
}

// waitForAdmission waits until the hub's admission webhook admits a valid FleetJob (a dry
// run, so nothing is stored).
func waitForAdmission(ctx context.Context, hub *Cluster, cluster string, timeout time.Duration) error {
	return Until(ctx, timeout, "the hub's admission webhook to admit a FleetJob", func(ctx context.Context) (bool, string, error) {
		err := hub.Client.Create(ctx, AdmissionProbe(cluster), client.DryRunAll)
		return err == nil, fmt.Sprint(err), nil
	})
}

// AdmissionProbe is a valid FleetJob for cluster, to create as a dry run: the API server
// sends it through both of the hub's webhooks and the webhook dry-runs its template, and
// nothing is stored.
func AdmissionProbe(cluster string) *musterv1.FleetJob {
	return &musterv1.FleetJob{
		ObjectMeta: metav1.ObjectMeta{Name: "admission-probe", Namespace: metav1.NamespaceDefault},
		Spec: musterv1.FleetJobSpec{
			Placement: musterv1.FleetJobPlacement{Mode: musterv1.PlacementDivided, Placement: musterv1.Placement{ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{cluster}}}},
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "probe", Image: "probe"}},
			}}}},
		},
	}
}

// withFlag returns args with flag's value replaced by value (or appended when absent).
func withFlag(args []string, flag, value string) []string {
	out := append([]string{}, args...)
	for i := 0; i < len(out); i++ {
		if out[i] == flag && i+1 < len(out) {
			out[i+1] = value
			return out
		}
		if strings.HasPrefix(out[i], flag+"=") {
			out[i] = flag + "=" + value
			return out
		}
	}
	return append(out, flag, value)
}
