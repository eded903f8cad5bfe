// Command toolchain builds (once) and prints the location of the Kubernetes binaries that
// Muster's integration and end-to-end tests use. See package toolchain.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/musterhq/muster/internal/testing/toolchain"
)

func main() {
	defaultDir, err := toolchain.CacheDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir := flag.String("cache-dir", defaultDir, "where built binaries are cached (env "+toolchain.CacheDirEnv+")")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	tc, err := toolchain.Ensure(ctx, *cacheDir, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolchain:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "toolchain: ready in %s\n", time.Since(start).Round(time.Millisecond))
	// The assets directory on stdout, for KUBEBUILDER_ASSETS=$(go run ./e2e/cmd/toolchain).
	fmt.Println(tc.AssetsDir)
}
