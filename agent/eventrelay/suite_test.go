package eventrelay_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/musterhq/muster/agent/eventrelay"
	"github.com/musterhq/muster/api/scheme"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/internal/testing/envtest"
)

const clusterName = "c1"

// budget is small so that a test can use one Work's up.
var budget = eventrelay.Budget{Burst: 3, Every: time.Hour}

var env *envtest.Environment

// TestMain runs the relay against one real API server that plays both parts: the hub
// (its Works in muster-member-c1) and the member (the objects and events elsewhere).
func TestMain(m *testing.M) { os.Exit(envtest.MainWith(m, &env, startRelay)) }

// startRelay starts the relay with the caches the agent gives it: the member's Warning
// events and its controllers' pods (read as the agent's ServiceAccount, with its RBAC),
// the hub's member namespace.
func startRelay(ctx context.Context, env *envtest.Environment) error {
	hub, err := env.HubOf(ctx, clusterName)
	if err != nil {
		return err
	}
	ownedPods, err := labels.NewRequirement(musterv1.ControllerLabel, selection.Exists, nil)
	if err != nil {
		return err
	}
	member, err := env.AgentConfig(ctx)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(member, ctrl.Options{
		Scheme:  scheme.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:   {Label: labels.NewSelector().Add(*ownedPods)},
			&corev1.Event{}: eventrelay.WarningEvents(),
		}},
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(hub); err != nil {
		return err
	}
	r := &eventrelay.Reconciler{
		Member: mgr.GetClient(), Hub: hub.GetClient(), Recorder: hub.GetEventRecorder("muster-agent"),
		Cluster: clusterName, Budget: budget,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	return nil
}
