package webhook_test

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// The refusals of kube-apiserver's own PodSecurity admission, as the hub gives them on the
// field of the pod template that breaks the level.
const (
	rootOnEveryNode = `Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true), hostPath volumes (volume "root"), privileged (container "main" must not set securityContext.privileged=true)`
	hostNetwork     = `Forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`
	privileged      = `Forbidden: violates PodSecurity "baseline:latest": privileged (container "main" must not set securityContext.privileged=true)`
	notRestricted   = `PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "main" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "main" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "main" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "main" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
)

// levelNamespace creates a namespace for the test whose Pod Security labels are labels.
func levelNamespace(t *testing.T, suffix string, labels map[string]string) string {
	t.Helper()
	name := strings.TrimRight(strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))[:min(len(t.Name()), 40)], "-") + "-" + suffix
	if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// rootOnNodes makes pods root on their node: privileged, in the node's PID namespace, with
// the node's file system mounted, on every node whatever its taints.
func rootOnNodes(s *corev1.PodSpec) {
	s.HostPID = true
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	s.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "root", MountPath: "/host"}}
	s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	s.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// restrictedPod meets the restricted level.
func restrictedPod(s *corev1.PodSpec) {
	s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	s.Containers[0].SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func privilegedContainer(s *corev1.PodSpec) {
	s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

func fleetJobPods(change func(*corev1.PodSpec)) func(*musterv1.FleetJob) {
	return func(fj *musterv1.FleetJob) { change(&fj.Spec.Template.Spec.Template.Spec) }
}

// The attack table: what a user allowed only Muster's kinds in one hub namespace could
// run on every member, each refused with the field and the message kube-apiserver's
// PodSecurity admission would give for the pods, or on the namespace.
func TestTenancyAttacksAreRefused(t *testing.T) {
	ns := env.Namespace(t)
	restricted := levelNamespace(t, "restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	agentNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: musterv1.AgentNamespace}}
	if err := env.Client.Create(t.Context(), agentNS); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"muster-member-c1", reservedByFlag} {
		if err := env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	reserved := func(ns, entry string) refusal {
		return refusal{"metadata.namespace", "Forbidden: namespace " + ns + " is reserved" + entry +
			": Muster would run this object in the namespace of the same name on every member, which belongs to the system or to Muster itself; use another namespace"}
	}
	tests := []struct {
		name string
		obj  client.Object
		want refusal
	}{
		{"BroadcastJob privileged, hostPID, hostPath / and tolerating every taint", broadcastJob("root", ns, rootOnNodes),
			refusal{"spec.template.spec", rootOnEveryNode}},
		{"FleetJob with hostNetwork", fleetJob("net", ns, fleetJobPods(func(s *corev1.PodSpec) { s.HostNetwork = true })),
			refusal{"spec.template.spec.template.spec", hostNetwork}},
		{"FleetCronJob whose runs are privileged", cronJob("cron", ns, func(s *musterv1.FleetJobSpec) { privilegedContainer(&s.Template.Spec.Template.Spec) }, nil),
			refusal{"spec.jobTemplate.spec.template.spec.template.spec", privileged}},
		{"FleetCronJob whose broadcast runs are root on every node", cronJob("bcron", ns, nil, rootOnNodes),
			refusal{"spec.broadcastJobTemplate.spec.template.spec", rootOnEveryNode}},
		{"FleetJob of baseline pods in a restricted namespace", fleetJob("plain", restricted, nil),
			refusal{"spec.template.spec.template.spec", "Forbidden: violates " + notRestricted}},
		{"FleetJob in kube-system", fleetJob("sys", "kube-system", nil), reserved("kube-system", "")},
		{"FleetJob in muster-agent as the agent's ServiceAccount", fleetJob("agent", musterv1.AgentNamespace, fleetJobPods(func(s *corev1.PodSpec) {
			s.ServiceAccountName = "muster-agent"
		})), reserved(musterv1.AgentNamespace, "")},
		{"BroadcastJob in the hub's namespace", broadcastJob("hub", hubNamespace, nil), reserved(hubNamespace, "")},
		{"FleetCronJob in a member's namespace", cronJob("member", "muster-member-c1", nil, nil), reserved("muster-member-c1", " (muster-member-*)")},
		{"WorkloadSpread in kube-system", &musterv1.WorkloadSpread{
			ObjectMeta: metav1.ObjectMeta{Name: "sys", Namespace: "kube-system"},
			Spec: musterv1.WorkloadSpreadSpec{
				TargetReference: musterv1.TargetReference{APIVersion: musterv1.GroupVersion.String(), Kind: "FleetJob", Name: "sys"},
				Subsets:         []musterv1.WorkloadSpreadSubset{{Name: "a"}},
			},
		}, reserved("kube-system", "")},
		{"FleetJob in a namespace the hub admin reserved", fleetJob("flag", reservedByFlag, nil), reserved(reservedByFlag, "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { expectRefused(t, tc.obj, []refusal{tc.want}) })
	}
}

// The controls: what the hub admin allowed runs.
func TestPodSecurityLevelsOfLabelledNamespaces(t *testing.T) {
	restricted := levelNamespace(t, "restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "v1.36"})
	privilegedNS := levelNamespace(t, "privileged", map[string]string{"pod-security.kubernetes.io/enforce": "privileged"})
	t.Run("a restricted FleetJob in a restricted namespace", func(t *testing.T) {
		expectAdmitted(t, fleetJob("restricted", restricted, fleetJobPods(restrictedPod)))
	})
	t.Run("a BroadcastJob root on every node in a privileged namespace", func(t *testing.T) {
		expectAdmitted(t, broadcastJob("root", privilegedNS, rootOnNodes))
	})
	t.Run("a privileged FleetJob in a privileged namespace", func(t *testing.T) {
		expectAdmitted(t, fleetJob("privileged", privilegedNS, fleetJobPods(privilegedContainer)))
	})
	t.Run("the version label picks the checks", func(t *testing.T) {
		expectRefused(t, fleetJob("plain", restricted, nil), []refusal{{"spec.template.spec.template.spec",
			"Forbidden: violates " + strings.Replace(notRestricted, "restricted:latest", "restricted:v1.36", 1)}})
	})
}

// warningCollector keeps the warnings the API server sends back.
type warningCollector struct {
	mu    sync.Mutex
	texts []string
}

func (w *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// createWarned creates obj and returns the warnings the API server answered with.
func createWarned(t *testing.T, obj client.Object) []string {
	t.Helper()
	w := &warningCollector{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("the hub refused the object: %v", err)
	}
	return w.texts
}

// A namespace labelled warn gets what upstream gives: the object is admitted with a
// warning naming what breaks the level, on the field of the template.
func TestPodSecurityWarnLevelWarns(t *testing.T) {
	ns := levelNamespace(t, "warn", map[string]string{"pod-security.kubernetes.io/warn": "restricted"})
	want := "spec.template.spec.template.spec: would violate " + notRestricted
	if got := createWarned(t, fleetJob("plain", ns, nil)); !slices.Contains(got, want) {
		t.Errorf("warnings = %q, want %q", got, want)
	}
	if got := createWarned(t, fleetJob("restricted", ns, fleetJobPods(restrictedPod))); len(got) != 0 {
		t.Errorf("warnings for a restricted FleetJob = %q, want none", got)
	}
	// An unlabelled namespace warns about nothing baseline allows.
	if got := createWarned(t, fleetJob("plain", env.Namespace(t), nil)); len(got) != 0 {
		t.Errorf("warnings in an unlabelled namespace = %q, want none", got)
	}
}

// A namespace labelled audit gets upstream's audit annotations in the API server's audit
// log, under the webhook's name.
func TestPodSecurityAuditLevelAnnotatesTheAuditEvent(t *testing.T) {
	ns := levelNamespace(t, "audit", map[string]string{"pod-security.kubernetes.io/audit": "restricted"})
	job := broadcastJob("plain", ns, nil)
	expectAdmitted(t, job)
	want := map[string]string{
		"broadcastjobs.muster.dev/enforce-policy":   "baseline:latest",
		"broadcastjobs.muster.dev/audit-violations": "spec.template.spec: would violate " + notRestricted,
	}
	envtest.Eventually(t, "the audit event of the BroadcastJob's create", func() (bool, string) {
		got, err := auditAnnotations(ns, job.Name)
		if err != nil {
			return false, err.Error()
		}
		for k, v := range want {
			if got[k] != v {
				return false, strings.Join(slices.Sorted(maps.Keys(got)), ", ") + ": " + got[k]
			}
		}
		return true, ""
	})
}

// auditAnnotations returns the annotations of the audit event of the create of the
// muster.dev object name in ns.
func auditAnnotations(ns, name string) (map[string]string, error) {
	ev, err := findAuditEvent(func(ev auditEvent) bool {
		return ev.Verb == "create" && ev.ObjectRef.Namespace == ns && ev.ObjectRef.Name == name
	})
	if ev == nil {
		return nil, err
	}
	return ev.Annotations, err
}

// auditEvent is what the tests read of an audit event.
type auditEvent struct {
	Verb        string                                     `json:"verb"`
	Stage       string                                     `json:"stage"`
	ObjectRef   struct{ Resource, Namespace, Name string } `json:"objectRef"`
	Annotations map[string]string                          `json:"annotations"`
}

// findAuditEvent returns the first completed request in the API server's audit log that
// match accepts; nil when there is none (yet).
func findAuditEvent(match func(auditEvent) bool) (*auditEvent, error) {
	f, err := os.Open(auditLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &ev); err != nil {
			return nil, err
		}
		if ev.Stage == "ResponseComplete" && match(ev) {
			return &ev, nil
		}
	}
	return nil, scanner.Err()
}

// A WorkloadSpread's patch runs in the FleetJob's pods: a patch that makes them privileged
// is refused, on the patch when the FleetJob exists, and on the FleetJob, naming the
// subset, when the spread came first.
func TestWorkloadSpreadPatchesKeepThePodSecurityLevel(t *testing.T) {
	ns := env.Namespace(t)
	privilegedPatch := &runtime.RawExtension{Raw: []byte(`{"spec":{"containers":[{"name":"main","securityContext":{"privileged":true}}]}}`)}
	spreadOf := func(name, target string) *musterv1.WorkloadSpread {
		return &musterv1.WorkloadSpread{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: musterv1.WorkloadSpreadSpec{
				TargetReference: musterv1.TargetReference{APIVersion: musterv1.GroupVersion.String(), Kind: "FleetJob", Name: target},
				Subsets: []musterv1.WorkloadSpreadSubset{
					{Name: "plain", ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"c1"}}, MaxReplicas: ptr.To(intstr.FromInt32(1))},
					{Name: "root", ClusterAffinity: musterv1.ClusterAffinity{ClusterNames: []string{"c2"}}, Patch: privilegedPatch},
				},
			},
		}
	}
	t.Run("spread of an existing FleetJob", func(t *testing.T) {
		expectAdmitted(t, fleetJob("existing", ns, nil))
		expectRefused(t, spreadOf("existing", "existing"), []refusal{{"spec.subsets[1].patch", privileged + " (at spec of the subset's pod template)"}})
	})
	t.Run("FleetJob created after its spread", func(t *testing.T) {
		expectAdmitted(t, spreadOf("first", "later"))
		expectRefused(t, fleetJob("later", ns, nil), []refusal{{"spec.template.spec.template.spec", privileged + " (in the Job of subset root of WorkloadSpread first)"}})
	})
}
