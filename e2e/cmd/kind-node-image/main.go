// Command kind-node-image readies a container engine and builds (once) the kind node image
// of package nodeimage, then prints its reference: kind create cluster --image $(...).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/musterhq/muster/e2e/engine"
	"github.com/musterhq/muster/e2e/nodeimage"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "kind-node-image:", err)
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
	image, err := nodeimage.Ensure(ctx, cacheDir, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kind-node-image: ready in %s\n", time.Since(start).Round(time.Millisecond))
	fmt.Println(image)
	return nil
}
