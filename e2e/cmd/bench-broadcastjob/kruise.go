package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/musterhq/muster/e2e/framework"
)

// Names kruise-manager looks for; see its pkg/webhook/util/controller.
const (
	kruiseMutatingWebhooks   = "kruise-mutating-webhook-configuration"
	kruiseValidatingWebhooks = "kruise-validating-webhook-configuration"
	kruiseJobNameLabel       = "broadcastjob-name"
)

// kruiseFeatureGates turn off what needs kruise-daemon on every node or the pod webhook,
// neither of which runs here; they leave the BroadcastJob controller as it is.
var kruiseFeatureGates = strings.Join([]string{
	"PodWebhook=false", "KruiseDaemon=false", "DaemonWatchingPod=false", "PodProbeMarkerGate=false",
	"WorkloadSpread=false", "PodUnavailableBudgetDeleteGate=false", "InPlaceUpdateEnvFromMetadata=false",
}, ",")

// installKruise installs what kruise-manager needs in member before it starts: its
// BroadcastJob CRD, the ImagePullJob CRD (the manager indexes ImagePullJobs at start, whatever
// runs; their controller stays off with KruiseDaemon) and no other, so its other controllers
// are never set up (each looks its kind up first, retrying for 16 s when it is missing:
// the manager takes about a minute to start, and goes on with those lookups, a few
// discovery requests every 16 s, for minutes after); and its two webhook configurations,
// empty. The manager refuses to start until
// it finds them; left empty, the API server never calls its webhooks, so nothing of Kruise's
// admission (defaulting, validation) runs: the benchmark's jobs set the defaults themselves.
func installKruise(ctx context.Context, member *framework.Cluster, crdPaths []string) error {
	for _, path := range crdPaths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
			return fmt.Errorf("parsing %s: %w", path, err)
		}
		if err := member.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing Kruise's CRD %s: %w", crd.GetName(), err)
		}
	}
	admission := member.Clientset.AdmissionregistrationV1()
	if _, err := admission.MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: kruiseMutatingWebhooks},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := admission.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: kruiseValidatingWebhooks},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return framework.Until(ctx, time.Minute, "Kruise's BroadcastJob API to be served", func(ctx context.Context) (bool, string, error) {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("apps.kruise.io/v1beta1")
		list.SetKind("BroadcastJobList")
		err := member.Client.List(ctx, list)
		return err == nil, fmt.Sprint(err), nil
	})
}

// kruiseManager runs kruise-manager outside the cluster against one member.
type kruiseManager struct {
	bin, dir   string
	member     *framework.Cluster
	qps, burst int
}

// start runs the manager with the BroadcastJob controller binding pods through the
// scheduler (byScheduler, Kruise's default) or by nodeName, and returns once that
// controller's workers run.
func (k *kruiseManager) start(ctx context.Context, byScheduler bool) (*framework.Process, error) {
	port, err := framework.FreePort()
	if err != nil {
		return nil, err
	}
	name := "kruise-" + map[bool]string{true: "scheduler", false: "nodename"}[byScheduler]
	logPath := filepath.Join(k.dir, "logs", name+".log")
	_ = os.Remove(logPath)
	// WEBHOOK_HOST makes it write its certificates to WEBHOOK_CERT_DIR instead of a Secret
	// and check its own webhook server at localhost:WEBHOOK_PORT before it sets up its
	// controllers.
	env := []string{
		"WEBHOOK_HOST=localhost",
		"WEBHOOK_PORT=" + strconv.Itoa(port),
		"WEBHOOK_CERT_DIR=" + filepath.Join(k.dir, "kruise", "certs"),
		"KUBECONFIG=" + k.member.Kubeconfig,
	}
	args := []string{
		"--kubeconfig", k.member.Kubeconfig,
		"--enable-leader-election=false",
		"--metrics-addr", "0", "--health-probe-addr", "0", "--enable-pprof=false",
		"--protection-log-path", filepath.Join(k.dir, "kruise", "log"),
		"--feature-gates", kruiseFeatureGates,
		"--rest-config-qps", strconv.Itoa(k.qps), "--rest-config-burst", strconv.Itoa(k.burst),
		"--assign-bcj-pods-by-scheduler=" + strconv.FormatBool(byScheduler),
	}
	p, err := framework.StartProcessWithEnv(name, logPath, k.bin, env, args...)
	if err != nil {
		return nil, err
	}
	err = framework.Until(ctx, 2*time.Minute, name+"'s BroadcastJob workers", func(ctx context.Context) (bool, string, error) {
		if !p.Running() {
			return false, "", fmt.Errorf("%s exited; see %s", name, logPath)
		}
		started, err := logHas(logPath, "Starting workers", "broadcastjob-controller")
		return started, "not yet", err
	})
	if err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// logHas reports whether a line of the log holds every one of words.
func logHas(path string, words ...string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true, nil
		}
	}
	return false, sc.Err()
}

// kruiseJob is the Kruise BroadcastJob equivalent to muster's job(): the same pod template,
// with the completion and failure policies Kruise's webhook would default (Always,
// FailFast) and, like it, no parallelism limit.
func kruiseJob(ns string, selector map[string]string) *unstructured.Unstructured {
	nodeSelector := map[string]any{}
	for k, v := range selector {
		nodeSelector[k] = v
	}
	j := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{
				"restartPolicy": string(corev1.RestartPolicyNever),
				"nodeSelector":  nodeSelector,
				"containers":    []any{map[string]any{"name": "probe", "image": "busybox"}},
			}},
			"completionPolicy": map[string]any{"type": "Always"},
			"failurePolicy":    map[string]any{"type": "FailFast"},
		},
	}}
	j.SetAPIVersion("apps.kruise.io/v1beta1")
	j.SetKind("BroadcastJob")
	j.SetNamespace(ns)
	j.SetName("bench")
	return j
}

// kruisePhase reads a Kruise BroadcastJob's status.phase and succeeded count.
func kruisePhase(ctx context.Context, c client.Client, ns string) (string, int64, error) {
	j := kruiseJob(ns, nil)
	if err := c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
		return "", 0, err
	}
	phase, _, _ := unstructured.NestedString(j.Object, "status", "phase")
	succeeded, _, _ := unstructured.NestedInt64(j.Object, "status", "succeeded")
	return phase, succeeded, nil
}
