//go:build e2e

package badinput

import (
	"testing"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/attacks"
)

// TestNamesCannotBeTaken: names the hub derives for one tenant's objects are not another
// object's to take (the name rows of e2e/attacks, which the kind suite runs too). Two
// FleetJobs whose namespace and name join alike both run to completion, and a FleetCronJob
// whose next run's name was taken in advance runs under its alternate name, leaving the
// squatter alone.
func TestNamesCannotBeTaken(t *testing.T) {
	t.Parallel()
	for _, check := range attacks.NameRows(attacks.Names{
		Hub: fleet.Hub.Client, Cluster: member1Name, Namespace: ns, Prefix: ns,
		FleetJob: func(namespace, name string) *musterv1.FleetJob {
			return fleetJob(name, func(fj *musterv1.FleetJob) {
				fj.Namespace = namespace
				fj.Spec.Placement.ClusterNames = []string{member1Name}
			})
		},
	}) {
		t.Run(check.Name, func(t *testing.T) {
			t.Parallel()
			if err := check.Run(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}
