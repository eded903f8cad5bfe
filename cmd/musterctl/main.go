// Command musterctl installs the Muster hub, joins member clusters and shows what runs
// across the fleet. It also works as the kubectl plugin kubectl-muster.
package main

import (
	"os"

	"github.com/musterhq/muster/cmd/musterctl/app"
)

func main() {
	if err := app.NewRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}
