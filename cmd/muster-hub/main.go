// Command muster-hub runs Muster's hub controllers against the hub cluster.
package main

import (
	"flag"
	"fmt"
	"os"
	// The hub image is FROM scratch, with no zoneinfo: FleetCronJob time zones resolve
	// from the copy embedded in the binary (about 450 KB).
	_ "time/tzdata"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/musterhq/muster/hub"
)

func main() {
	opts := hub.NewOptions()
	opts.AddFlags(pflag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	pflag.CommandLine.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := hub.Run(ctrl.SetupSignalHandler(), opts); err != nil {
		fmt.Fprintln(os.Stderr, "muster-hub:", err)
		os.Exit(1)
	}
}
