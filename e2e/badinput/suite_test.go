//go:build e2e

// Package badinput throws malformed and hostile objects of all seven kinds at a real
// fleet (hub and two members): each is refused at admission with the field and message a
// user reads, or admitted and reported with a condition. Afterwards the hub and both
// agents still run, their memory has not doubled, an Indexed FleetJob of 2147483647
// completions leaves the agents' memory flat, and a healthy FleetJob and FleetCronJob run
// on time.
package badinput

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/e2e/framework"
	"github.com/musterhq/muster/e2e/framework/local"
)

var (
	fleet            *framework.Fleet
	muster           *framework.Muster
	member1, member2 *framework.Cluster
)

// parallelTests: TestBadInput, TestNamesCannotBeTaken and TestTenancy run side by side
// in their own namespaces, so that the minute TestNamesCannotBeTaken's FleetCronJob waits
// for its slot passes while TestBadInput works; the rest are their parallel subtests.
const parallelTests = 6

func TestMain(m *testing.M) {
	if err := framework.AtLeastParallel(parallelTests); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(framework.RunSuite(m, framework.SuiteConfig{Name: "badinput", Fleet: framework.FleetOptions{Members: 2}, Prepare: prepare}, &fleet, &muster))
}

// prepare gives each member four nodes of the work pool and the hub the suite's namespace.
func prepare(ctx context.Context, f *framework.Fleet) error {
	member1, member2 = f.Members[0], f.Members[1]
	for _, m := range f.Members {
		var nodes []*corev1.Node
		for i := range 4 {
			n := local.NewNode(fmt.Sprintf("%s-work-%d", m.Name, i))
			n.Labels[poolLabel] = workPool
			nodes = append(nodes, n)
		}
		if err := local.CreateNodes(ctx, m.Clientset, nodes...); err != nil {
			return err
		}
		if err := framework.WaitForClusterReady(ctx, m, len(nodes), time.Minute); err != nil {
			return err
		}
	}
	for _, name := range []string{ns, sliceNamespace} {
		if err := f.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			return err
		}
	}
	return nil
}
