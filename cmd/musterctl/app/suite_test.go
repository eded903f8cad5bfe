package app_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/musterhq/muster/cmd/musterctl/app"
	"github.com/musterhq/muster/internal/testing/envtest"
)

// env is a real kube-apiserver with Muster's CRDs; musterctl's commands run in-process
// against it through kubeconfig, each test in namespaces of its own.
var (
	env        *envtest.Environment
	kubeconfig string
	cacheDir   string
)

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	var err error
	env, err = envtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer env.Stop()
	dir, err := os.MkdirTemp("", "musterctl-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	kubeconfig, cacheDir = filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "cache")
	if err := writeKubeconfig(kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := installWidgetCRD(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func writeKubeconfig(path string) error {
	cfg := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*kc, path)
}

// result is what one musterctl run printed and its exit code.
type result struct {
	out, err string
	code     int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
}

// musterctl runs musterctl in-process against the test API server.
func musterctl(args ...string) result {
	var out, errOut bytes.Buffer
	code := app.Run("musterctl", withKubeconfig(args), &out, &errOut)
	return result{out: out.String(), err: errOut.String(), code: code}
}

// runCtx runs musterctl until ctx ends.
func runCtx(ctx context.Context, out, errOut io.Writer, args ...string) int {
	return app.RunContext(ctx, "musterctl", withKubeconfig(args), out, errOut)
}

// runUnreachable runs musterctl against an API server that is not there.
func runUnreachable(out, errOut io.Writer, args ...string) int {
	return app.Run("musterctl", append([]string{"--server", "https://127.0.0.1:1", "--request-timeout", "2s"}, args...), out, errOut)
}

// appRunAsPlugin runs musterctl as kubectl runs the plugin binary kubectl-muster.
func appRunAsPlugin(out, errOut io.Writer, args ...string) int {
	return app.Run("kubectl-muster", withKubeconfig(args), out, errOut)
}

func withKubeconfig(args []string) []string {
	return append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cacheDir}, args...)
}

// syncBuffer is a bytes.Buffer that a running command writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fields squashes a table's lines into their space-separated cells.
func fields(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

// hasLine reports whether out has a line whose squashed cells start with prefix.
func hasLine(out, prefix string) bool {
	for _, l := range fields(out) {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
