// Command fleet brings a local Muster test fleet (a hub and member clusters) up or down.
//
//	fleet up   [--dir DIR] [--members N] [--nodes M] [--provider local|kind]
//	fleet down [--dir DIR]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/musterhq/muster/e2e/framework"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "up" && os.Args[1] != "down") {
		fmt.Fprintln(os.Stderr, "usage: fleet up|down [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	dir := fs.String("dir", "_output/fleet", "directory of the fleet's kubeconfigs and state")
	members := fs.Int("members", 2, "number of member clusters")
	nodes := fs.Int("nodes", 3, "fake nodes per member cluster")
	providerName := fs.String("provider", "", "cluster provider: local or kind (default $"+framework.ProviderEnv+", then local)")
	_ = fs.Parse(os.Args[2:])

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var err error
	if os.Args[1] == "up" {
		err = up(ctx, framework.FleetOptions{Dir: *dir, Provider: *providerName, Members: *members, NodesPerMember: *nodes})
	} else {
		err = framework.Down(ctx, *dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

func up(ctx context.Context, opts framework.FleetOptions) error {
	start := time.Now()
	f, err := framework.Up(ctx, opts)
	if err != nil {
		return err
	}
	fmt.Printf("fleet is up in %s (provider %s):\n", time.Since(start).Round(100*time.Millisecond), f.Provider.Name())
	for _, c := range f.Clusters() {
		ready, err := framework.ReadyNodes(ctx, c)
		if err != nil {
			return err
		}
		fmt.Printf("  %-8s %-6s %d ready nodes   kubectl --kubeconfig %s get nodes\n", c.Name, c.Role, ready, c.Kubeconfig)
	}
	return nil
}
