// Command engine readies the container engine the kind suites use: it installs Debian's
// docker.io and starts dockerd when none answers (package engine). make test runs it in
// the foreground, before anything runs at low priority, so that a dockerd it starts, and
// every kind node container under it, keeps the normal CPU priority.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/musterhq/muster/e2e/engine"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	cacheDir, err := toolchain.CacheDir()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := engine.Ensure(ctx, cacheDir, os.Stderr); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "engine: ready in %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}
