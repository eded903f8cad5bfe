package main

import (
	"context"
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/e2e/framework"
)

// measureFloor creates n suspended Jobs, then n suspended FleetJobs (each passing the
// hub's admission webhook), from this process with workers goroutines as fast as the API
// server takes them, and prints when the median and the 99th percentile create returned,
// and the last: no controller can create a slot's children sooner than that.
func measureFloor(ctx context.Context, hubCluster *framework.Cluster, n, workers int) error {
	const ns = "bench-floor"
	if err := hubCluster.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	for _, kind := range []struct {
		name  string
		obj   func(i int) client.Object
		list  client.ObjectList
		empty client.Object
	}{
		{"Job", func(i int) client.Object {
			return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%03d", i), Namespace: ns}, Spec: jobSpec()}
		}, &batchv1.JobList{}, &batchv1.Job{}},
		{"FleetJob", func(i int) client.Object {
			return &musterv1.FleetJob{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("floor-%03d", i), Namespace: ns}, Spec: musterv1.FleetJobSpec{Template: batchv1.JobTemplateSpec{Spec: jobSpec()}}}
		}, &musterv1.FleetJobList{}, &musterv1.FleetJob{}},
	} {
		done, err := parallel(ctx, n, workers, func(ctx context.Context, i int) error {
			return hubCluster.Client.Create(ctx, kind.obj(i))
		})
		if err != nil {
			return fmt.Errorf("creating %d %ss: %w", n, kind.name, err)
		}
		slices.Sort(done)
		fmt.Printf("==> floor: %d %s creates, %d goroutines: P50 %.0f ms, P99 %.0f ms, all %.0f ms after the start\n",
			n, kind.name, workers, ms(percentile(done, 50)), ms(percentile(done, 99)), ms(done[len(done)-1]))
		if err := deleteAll(ctx, hubCluster.Client, ns, kind.list, kind.empty); err != nil {
			return err
		}
	}
	return nil
}
