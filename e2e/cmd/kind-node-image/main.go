// Command kind-node-image readies a container engine and builds (once) the kind node image
// of package nodeimage, then prints its reference: kind create cluster --image $(...).
// With -engine-only it readies the engine and stops: make test does that first, in the
// foreground, so that a dockerd it starts (and every kind node under it) keeps the normal
// CPU priority, and builds the image later at nice 19 beside the local suites.
package main

import (
	"context"
	"flag"
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
	engineOnly := flag.Bool("engine-only", false, "ready the container engine, build no image")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *engineOnly); err != nil {
		fmt.Fprintln(os.Stderr, "kind-node-image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, engineOnly bool) error {
	cacheDir, err := toolchain.CacheDir()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := engine.Ensure(ctx, cacheDir, os.Stderr); err != nil {
		return err
	}
	if engineOnly {
		return nil
	}
	image, err := nodeimage.Ensure(ctx, cacheDir, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kind-node-image: ready in %s\n", time.Since(start).Round(time.Millisecond))
	fmt.Println(image)
	return nil
}
