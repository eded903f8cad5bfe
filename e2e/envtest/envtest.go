// Package envtest starts a real kube-apiserver and etcd, from the cached toolchain, with
// Muster's CRDs installed: the harness of every integration test.
package envtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zapcore"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/toolchain"
)

// Environment is a running control plane.
type Environment struct {
	Config *rest.Config
	Client client.Client
	env    *crenvtest.Environment
}

// Start starts the control plane and installs every CRD under deploy/crd. It fails with
// instructions when the toolchain has not been built.
func Start() (*Environment, error) {
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
		Scheme:                framework.Scheme,
	}
	cfg, err := env.Start()
	if err != nil {
		// Start leaves the control plane running when a later step (installing the CRDs)
		// fails; stop it rather than leak two processes per failed run.
		return nil, errors.Join(fmt.Errorf("starting envtest from %s: %w", tc.AssetsDir, err), env.Stop())
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: framework.Scheme})
	if err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return &Environment{Config: cfg, Client: c, env: env}, nil
}

// StartManager starts a controller manager against the environment with the controllers
// setup registers, until ctx ends.
func (e *Environment) StartManager(ctx context.Context, setup func(ctrl.Manager) error) error {
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{Scheme: framework.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
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

// RepoRoot finds the module root; see framework.RepoRoot.
func RepoRoot() (string, error) { return framework.RepoRoot() }

// Main is the TestMain of a controller test package: it starts a control plane, stores it
// in env, starts a manager with the controllers setup registers, runs the tests and stops
// everything. It returns the exit code for os.Exit. Controller logs below errors are
// dropped: the tests say what went wrong.
func Main(m *testing.M, env **Environment, setup func(ctrl.Manager) error) int {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Stop()
	*env = e
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.StartManager(ctx, setup); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
