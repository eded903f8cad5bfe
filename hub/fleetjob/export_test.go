package fleetjob

import musterv1 "github.com/musterhq/muster/api/v1alpha1"

// SetObserved has r tell observe of each FleetJob a round is done with.
func (r *Reconciler) SetObserved(observe func(*musterv1.FleetJob)) { r.observed = observe }
