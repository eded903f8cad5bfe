// Package envtest starts a real kube-apiserver and etcd, from the cached toolchain, with
// Muster's CRDs installed: the harness of every integration test.
//
// It wires member-side controllers with the agent's own manager (package agent), which
// imports the agent's controllers: a test that uses this package must be an external test
// package (package x_test) when x is one of them, or Go reports an import cycle.
package envtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/api/scheme"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

// Environment is a running control plane.
type Environment struct {
	Config *rest.Config
	Client client.Client
	env    *crenvtest.Environment
	// hub is the hub cluster MainMulticluster engages, nil under Main.
	hub cluster.Cluster
}

// Option changes the control plane before it starts.
type Option func(*crenvtest.Environment) error

// WithAuditLog makes the API server write, as JSON lines to path, the audit event of every
// write to a muster.dev object, at level Metadata: with the audit annotations of the
// admission webhooks that saw it; and of every create of a Job or PodTemplate, which is
// how the hub's webhook dry-runs templates.
func WithAuditLog(path string) Option {
	return func(env *crenvtest.Environment) error {
		policy := path + ".policy.yaml"
		const rules = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch]
  resources: [{group: muster.dev}]
- level: Metadata
  verbs: [create]
  resources: [{group: batch, resources: [jobs]}, {group: "", resources: [podtemplates]}]
- level: None
`
		if err := os.WriteFile(policy, []byte(rules), 0o600); err != nil {
			return fmt.Errorf("writing the audit policy: %w", err)
		}
		env.ControlPlane.GetAPIServer().Configure().Set("audit-policy-file", policy).Set("audit-log-path", path)
		return nil
	}
}

// Start starts the control plane, changed by opts, and installs every CRD under
// deploy/crd. It fails with instructions when the toolchain has not been built.
func Start(opts ...Option) (*Environment, error) {
	cacheDir, err := toolchain.CacheDir()
	if err != nil {
		return nil, err
	}
	tc, err := toolchain.Locate(cacheDir)
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	env := &crenvtest.Environment{
		BinaryAssetsDirectory: tc.AssetsDir,
		CRDDirectoryPaths:     []string{filepath.Join(root, "deploy", "crd")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme.Scheme,
		// make test runs these suites at nice 19 beside the e2e fleets, which take the
		// CPU first: an API server may need far longer than envtest's default 20 s to
		// start while a fleet starts, and its discovery may take longer than envtest's
		// default 10 s to serve the CRDs just installed.
		ControlPlaneStartTimeout: 2 * time.Minute,
		CRDInstallOptions:        crenvtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	for _, opt := range opts {
		if err := opt(env); err != nil {
			return nil, err
		}
	}
	cfg, err := env.Start()
	if err != nil {
		// Start leaves the control plane running when a later step (installing the CRDs)
		// fails; stop it rather than leak two processes per failed run.
		return nil, errors.Join(fmt.Errorf("starting envtest from %s: %w", tc.AssetsDir, err), env.Stop())
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &Environment{Config: cfg, Client: c, env: env}, nil
}

// StartManager starts a controller manager against the environment with the controllers
// setup registers, until ctx ends.
func (e *Environment) StartManager(ctx context.Context, setup func(ctrl.Manager) error) error {
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	if err := setup(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "test manager stopped")
		}
	}()
	return nil
}

// Stop stops the control plane.
func (e *Environment) Stop() error { return e.env.Stop() }

// UserConfig is a rest.Config that authenticates as user, in groups, with a client
// certificate signed by the API server's client CA: the API server sees exactly what it
// sees of a certificate its signer issued (groups from the subject's organizations).
func (e *Environment) UserConfig(user string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(crenvtest.User{Name: user, Groups: groups}, &rest.Config{QPS: e.Config.QPS, Burst: e.Config.Burst})
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", user, err)
	}
	return u.Config(), nil
}

// RepoRoot finds the module root by walking up from the working directory, which go test
// sets to the package under test.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Main is the TestMain of a controller test package: it starts a control plane, stores it
// in env, starts a manager with the controllers setup registers, runs the tests and stops
// everything. It returns the exit code for os.Exit. Controller logs below errors are
// dropped: the tests say what went wrong.
func Main(m *testing.M, env **Environment, setup func(ctrl.Manager) error) int {
	return MainWith(m, env, func(ctx context.Context, e *Environment) error {
		return e.StartManager(ctx, setup)
	})
}

// MainWith is Main for a package that starts what it tests itself (a multicluster
// manager, a webhook server, objects the tests share): start runs once the control plane
// is up, with a context that ends after the last test. A nil start runs the tests against
// the bare control plane. opts change the control plane (see Start).
func MainWith(m *testing.M, env **Environment, start func(context.Context, *Environment) error, opts ...Option) int {
	if fuzzing() {
		// Fuzz targets are pure, and every fuzz worker is a process of its own that passes
		// through TestMain: none of them needs a control plane.
		return m.Run()
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	e, err := Start(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Stop()
	*env = e
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if start != nil {
		if err := start(ctx, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// fuzzing reports whether this test binary was started to fuzz (-test.fuzz) or as one of
// the fuzzing engine's workers.
func fuzzing() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	target, worker := flag.Lookup("test.fuzz"), flag.Lookup("test.fuzzworker")
	return (target != nil && target.Value.String() != "") || (worker != nil && worker.Value.String() == "true")
}

// Namespace creates a namespace for the test, named after it.
func (e *Environment) Namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	name = strings.TrimRight(name[:min(len(name), 55)], "-")
	if err := e.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// eventuallyTimeout bounds Eventually. It is a bound on failure, not a wait: make test
// runs these tests at low priority beside the e2e fleets, which can take the CPU for tens
// of seconds while one starts.
const eventuallyTimeout = time.Minute

// Eventually polls cond every 50ms for up to eventuallyTimeout; cond returns whether it
// holds and a description of what it saw, which the failure reports.
func Eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, eventuallyTimeout, true, func(context.Context) (bool, error) {
		ok, state := cond()
		last = state
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: never happened; last state: %s", what, last)
	}
}

// ExpectEvent waits for an event with reason in namespace, about the object named
// regarding (any object when empty).
func (e *Environment) ExpectEvent(t *testing.T, namespace, regarding, reason string) {
	t.Helper()
	Eventually(t, "event "+reason, func() (bool, string) {
		seen, err := e.EventReasons(namespace, regarding)
		if err != nil {
			return false, err.Error()
		}
		return slices.Contains(seen, reason), strings.Join(seen, ",")
	})
}

// EventReasons lists the reasons of the events in namespace about the object named
// regarding (any object when empty).
func (e *Environment) EventReasons(namespace, regarding string) ([]string, error) {
	var events eventsv1.EventList
	if err := e.Client.List(context.Background(), &events, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	var reasons []string
	for _, ev := range events.Items {
		if regarding == "" || ev.Regarding.Name == regarding {
			reasons = append(reasons, ev.Reason)
		}
	}
	return reasons, nil
}
