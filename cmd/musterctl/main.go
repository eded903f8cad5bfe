// Command musterctl installs the Muster hub, joins member clusters and shows what runs
// across the fleet. Installed as kubectl-muster it is also the kubectl plugin
// `kubectl muster`.
package main

import (
	"os"
	"path/filepath"

	"github.com/musterhq/muster/cmd/musterctl/app"
)

func main() {
	os.Exit(app.Run(filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr))
}
