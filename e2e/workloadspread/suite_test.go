//go:build e2e

// Package workloadspread runs WorkloadSpreads against a real hub: its admission webhook
// refuses each rule OpenAPI and CEL cannot express, with a clear message.
package workloadspread

import (
	"os"
	"testing"

	"github.com/musterhq/muster/e2e/framework"
)

var (
	fleet  *framework.Fleet
	muster *framework.Muster
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{Name: "workloadspread"}, &fleet, &muster))
}
