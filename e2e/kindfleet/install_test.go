//go:build e2ekind

package kindfleet

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/agent/heartbeat"
	"github.com/musterhq/muster/agent/registration"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/e2e/images"
	hubwebhook "github.com/musterhq/muster/hub/webhook"
)

// installedVersion is the Muster version of the images the fleet is installed from; the
// upgrade test rolls the hub and agents to upgradedVersion.
const (
	installedVersion = "v0.1.0"
	upgradedVersion  = "v0.2.0"
)

var (
	installOnce sync.Once
	installed   *framework.Muster
	installErr  error
	// firstCerts are the agents' hub certificates right after the install, by member.
	firstCerts = map[string][]byte{}
	// agentImage is the agent's image, which a re-join deploys again, and deployedVersion
	// its version.
	agentImage      string
	deployedVersion = installedVersion
	// admission writes through the hub's webhooks from the install on; TestMain reports it.
	admission *admissionProbe
)

// muster installs Muster in the kind fleet on first use, from images built here, and
// returns it; every install test shares the installation.
func muster(t *testing.T) *framework.Muster {
	t.Helper()
	installOnce.Do(func() {
		ctx := context.Background()
		start := time.Now()
		p := fleet.Provider.(*kind.Provider)
		hubImage, err := images.BuildScratchVersion(ctx, images.Hub, "muster.local/muster-hub", installedVersion)
		if err != nil {
			installErr = err
			return
		}
		agentImage, err = images.BuildScratchVersion(ctx, images.Agent, "muster.local/muster-agent", installedVersion)
		if err != nil {
			installErr = err
			return
		}
		if installErr = p.LoadImageArchive(fleet.Hub.Name, images.Archive(ctx, hubImage)); installErr != nil {
			return
		}
		for _, m := range fleet.Members {
			if installErr = p.LoadImageArchive(m.Name, images.Archive(ctx, agentImage)); installErr != nil {
				return
			}
		}
		hubURL, err := p.InternalAPIServer(fleet.Hub.Name)
		if err != nil {
			installErr = err
			return
		}
		installed, installErr = framework.InstallInCluster(ctx, fleet, framework.InClusterOptions{
			HubImage: hubImage, AgentImage: agentImage, HubAPIServer: hubURL, Helm: true,
			HubArgs: []string{fmt.Sprintf("--webhook-cert-validity=%s", webhookCertificateValidity)},
		})
		if installErr == nil {
			admission = startAdmissionProbe(fleet.Hub, fleet.Members[0].Name)
		}
		fmt.Printf("kindfleet: Muster installed in-cluster (images; helm install of the hub and member1's agent, musterctl join of member2's; accept; members Available) in %s\n", time.Since(start).Round(time.Second))
		for _, m := range fleet.Members {
			secrets := m.Clientset.CoreV1().Secrets(musterv1.AgentNamespace)
			installErr = framework.Until(ctx, time.Minute, m.Name+"'s agent credentials Secret", func(ctx context.Context) (bool, string, error) {
				secret, err := secrets.Get(ctx, registration.CredentialsSecret, metav1.GetOptions{})
				if err != nil {
					var names []string
					if list, lerr := secrets.List(ctx, metav1.ListOptions{}); lerr == nil {
						for _, s := range list.Items {
							names = append(names, s.Name)
						}
					}
					return false, fmt.Sprintf("%v (Secrets there: %v)", err, names), nil
				}
				firstCerts[m.Name] = secret.Data[registration.KeyTLSCert]
				return true, "", nil
			})
			if installErr != nil {
				installErr = fmt.Errorf("%w\nagent log:\n%s", installErr, agentLog(ctx, m))
				return
			}
		}
	})
	if installErr != nil {
		t.Fatalf("installing Muster in the kind fleet: %v", installErr)
	}
	return installed
}

func TestHubAndAgentsRunAsDeploymentsFromImagesBuiltHere(t *testing.T) {
	muster(t)
	ctx := t.Context()
	wantReady := func(c *framework.Cluster, ns, name string, replicas int32) {
		t.Helper()
		err := framework.Until(ctx, 2*time.Minute, fmt.Sprintf("%s/%s in %s to have %d ready replicas", ns, name, c.Name, replicas), func(ctx context.Context) (bool, string, error) {
			var d appsv1.Deployment
			if err := c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
				return false, err.Error(), nil
			}
			return d.Status.ReadyReplicas == replicas, fmt.Sprintf("%d ready", d.Status.ReadyReplicas), nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	// Two hub replicas behind leader election, as the chart deploys them.
	wantReady(fleet.Hub, "muster-system", "muster-hub", 2)
	for _, m := range fleet.Members {
		wantReady(m, musterv1.AgentNamespace, "muster-agent", 1)
	}
	// Each agent reports its release version, which the hub's supports.
	for _, m := range fleet.Members {
		wantAgentVersion(t, m.Name, deployedVersion)
	}
}

// wantAgentVersion waits until cluster's agent reports version and the hub judges it
// supported.
func wantAgentVersion(t *testing.T, cluster, version string) {
	t.Helper()
	err := framework.Until(t.Context(), time.Minute, cluster+"'s agent at "+version+", supported", func(ctx context.Context) (bool, string, error) {
		var mc musterv1.MemberCluster
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: cluster}, &mc); err != nil {
			return false, err.Error(), nil
		}
		c := meta.FindStatusCondition(mc.Status.Conditions, musterv1.MemberClusterAgentVersionSupported)
		if c == nil {
			return false, "agent " + mc.Status.AgentVersion + ", no verdict", nil
		}
		return mc.Status.AgentVersion == version && c.Status == metav1.ConditionTrue, fmt.Sprintf("agent %s, %s: %s", mc.Status.AgentVersion, c.Status, c.Message), nil
	})
	if err != nil {
		t.Error(err)
	}
}

func TestDividedIndexedFleetJobRunsRealContainersAcrossMembers(t *testing.T) {
	muster(t)
	ctx := t.Context()
	const completions = 4
	fj := indexed(dividedJob("report-index", completions, 2, "env", "JOB_COMPLETION_INDEX"))
	createOnHub(t, fj)
	waitComplete(t, fj, 3*time.Minute, nil)

	// Every fleet-wide index ran exactly once to success, each in a real container that
	// printed the index the agent gave it; both members ran some.
	seen := map[string]string{}
	for _, m := range fleet.Members {
		var pods corev1.PodList
		if err := m.Client.List(ctx, &pods, client.InNamespace("default"), client.MatchingLabels{batchv1.JobNameLabel: fj.Name}); err != nil {
			t.Fatal(err)
		}
		ran := 0
		for _, p := range pods.Items {
			if p.Status.Phase != corev1.PodSucceeded {
				continue
			}
			raw, err := m.Clientset.CoreV1().Pods("default").GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			if err != nil {
				t.Fatalf("%s: log of %s: %v", m.Name, p.Name, err)
			}
			index := strings.TrimPrefix(strings.TrimSpace(string(raw)), "JOB_COMPLETION_INDEX=")
			if other, dup := seen[index]; dup {
				t.Errorf("index %s succeeded twice: in %s and in %s", index, other, m.Name)
			}
			seen[index] = m.Name
			ran++
		}
		if ran == 0 {
			t.Errorf("%s ran no pod of a job divided over both members", m.Name)
		}
	}
	var got []string
	for index := range seen {
		got = append(got, index)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "0,1,2,3" {
		t.Errorf("the pods printed indexes %v, want each of 0-3 once", got)
	}
}

func TestAgentPodDeletedComesBackWithItsIdentity(t *testing.T) {
	muster(t)
	ctx := t.Context()
	member := fleet.Members[0]
	pods := member.Clientset.CoreV1().Pods(musterv1.AgentNamespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=muster-agent"})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("listing the agent's pods: %v (%d pods)", err, len(list.Items))
	}
	old := list.Items[0].Name
	deleted := time.Now()
	if err := pods.Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Renewals by the old pod while it terminates prove nothing: wait until it is gone.
	err = framework.Until(ctx, time.Minute, "the old agent pod "+old+" to be gone", func(ctx context.Context) (bool, string, error) {
		_, err := pods.Get(ctx, old, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	deleted = time.Now()
	// The new pod finds its key and certificate in the member's Secret: no new join, no
	// new acceptance; the hub hears from it again.
	err = framework.Until(ctx, 2*time.Minute, "a new agent pod in "+member.Name+" to report to the hub", func(ctx context.Context) (bool, string, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=muster-agent"})
		if err != nil {
			return false, err.Error(), nil
		}
		fresh := false
		for _, p := range list.Items {
			if p.Name != old && podReady(p) {
				fresh = true
			}
		}
		if !fresh {
			return false, "no new ready agent pod", nil
		}
		// The heartbeat: the agent renews its Lease in its namespace on the hub.
		lease, err := fleet.Hub.Clientset.CoordinationV1().Leases(musterv1.MemberNamespace(member.Name)).Get(ctx, heartbeat.LeaseName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if lease.Spec.RenewTime == nil || !lease.Spec.RenewTime.After(deleted) {
			return false, fmt.Sprintf("lease renewed at %v, before the pod was deleted", lease.Spec.RenewTime), nil
		}
		var mc musterv1.MemberCluster
		if err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: member.Name}, &mc); err != nil {
			return false, err.Error(), nil
		}
		available := meta.IsStatusConditionTrue(mc.Status.Conditions, musterv1.MemberClusterAvailable)
		return available, fmt.Sprintf("Available=%v", available), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestAgentsRotateTheirCertificatesInCluster: the hub signs agent certificates for a few
// minutes only in this fleet (main_test.go), so every agent rotates during the suite, from
// its pod, authenticated by its current certificate; its cluster stays Available. The
// join line is used by then: the bootstrap Secret musterctl join wrote is gone, and the
// one the Helm chart keeps is marked used with its token's ID.
func TestAgentsRotateTheirCertificatesInCluster(t *testing.T) {
	m := muster(t)
	ctx := t.Context()
	for _, member := range fleet.Members {
		secrets := member.Clientset.CoreV1().Secrets(musterv1.AgentNamespace)
		boot, err := secrets.Get(ctx, registration.BootstrapSecret, metav1.GetOptions{})
		switch _, helm := m.HelmReleases[member.Name]; {
		case helm && err != nil:
			t.Errorf("%s: the bootstrap Secret the chart keeps: %v", member.Name, err)
		case helm && boot.Annotations[registration.UsedAnnotation] == "":
			t.Errorf("%s: the bootstrap Secret the chart keeps is not marked used: annotations %v", member.Name, boot.Annotations)
		case !helm && !apierrors.IsNotFound(err):
			t.Errorf("%s: the bootstrap Secret musterctl join wrote is still there (err %v)", member.Name, err)
		}
	}
	for _, m := range fleet.Members {
		secrets := m.Clientset.CoreV1().Secrets(musterv1.AgentNamespace)
		err := framework.Until(ctx, signingDuration, m.Name+"'s agent to rotate its certificate", func(ctx context.Context) (bool, string, error) {
			secret, err := secrets.Get(ctx, registration.CredentialsSecret, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return !bytes.Equal(secret.Data[registration.KeyTLSCert], firstCerts[m.Name]), "the certificate of the install", nil
		})
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := framework.WaitForClusterCondition(ctx, fleet.Hub, m.Name, musterv1.MemberClusterAvailable, metav1.ConditionTrue, time.Minute); err != nil {
			t.Error(err)
		}
	}
}

// agentLog is the tail of the agent's log in member m, for failures.
func agentLog(ctx context.Context, m *framework.Cluster) string {
	pods, err := m.Clientset.CoreV1().Pods(musterv1.AgentNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=muster-agent"})
	if err != nil || len(pods.Items) == 0 {
		return fmt.Sprintf("(no agent pod: %v)", err)
	}
	var out strings.Builder
	for _, p := range pods.Items {
		raw, err := m.Clientset.CoreV1().Pods(musterv1.AgentNamespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](40)}).DoRaw(ctx)
		fmt.Fprintf(&out, "--- %s (%s, err %v)\n%s\n", p.Name, p.Status.Phase, err, raw)
	}
	return out.String()
}

// helmUninstallLeavesNoWebhook uninstalls the hub's Helm release and waits until both of
// the webhook configurations the hub registered itself are gone (they belong to its
// ClusterRole, and the garbage collector deletes them with it); a FleetJob then passes
// admission, since nothing refuses the kinds no hub serves, and the CRDs the chart keeps
// still serve it.
func helmUninstallLeavesNoWebhook(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if _, err := installed.HelmUninstall(ctx, fleet.Hub, framework.HubRelease); err != nil {
		return 0, err
	}
	err := framework.Until(ctx, time.Minute, "the hub's webhook configurations to be gone", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, cfg := range []client.Object{&admissionregistrationv1.ValidatingWebhookConfiguration{}, &admissionregistrationv1.MutatingWebhookConfiguration{}} {
			err := fleet.Hub.Client.Get(ctx, client.ObjectKey{Name: hubwebhook.ConfigurationName}, cfg)
			if !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%T (%v)", cfg, err))
			}
		}
		return len(left) == 0, fmt.Sprint(left), nil
	})
	if err != nil {
		return 0, err
	}
	if err := fleet.Hub.Client.Create(ctx, framework.AdmissionProbe(fleet.Members[0].Name), client.DryRunAll); err != nil {
		return 0, fmt.Errorf("after helm uninstall, a FleetJob is refused: %w", err)
	}
	return time.Since(start), nil
}

// helmUninstallOfAnAgentLeavesOnlyItsCRD uninstalls the agent's Helm release in member
// and waits until everything the agent and its chart made in the member is gone (its
// namespace, with its Secrets and Lease, its RBAC and the Work executor's), but the CRD,
// which the chart keeps (crds.keep).
func helmUninstallOfAnAgentLeavesOnlyItsCRD(ctx context.Context, member *framework.Cluster) (time.Duration, error) {
	start := time.Now()
	if _, err := installed.HelmUninstall(ctx, member, framework.AgentRelease); err != nil {
		return 0, err
	}
	gone := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.AgentNamespace}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "muster-agent"}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: musterv1.WorkExecutor}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "muster-agent"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: musterv1.WorkExecutor}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: musterv1.WorkExecutor + "-admin"}},
	}
	err := framework.Until(ctx, 2*time.Minute, "the agent's objects in "+member.Name+" to be gone", func(ctx context.Context) (bool, string, error) {
		var left []string
		for _, o := range gone {
			if err := member.Client.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				left = append(left, fmt.Sprintf("%T %s (%v)", o, o.GetName(), err))
			}
		}
		return len(left) == 0, fmt.Sprint(left), nil
	})
	if err != nil {
		return 0, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := member.Client.Get(ctx, client.ObjectKey{Name: "broadcastjobs.muster.dev"}, &crd); err != nil {
		return 0, fmt.Errorf("the CRD the chart keeps: %w", err)
	}
	return time.Since(start), nil
}
