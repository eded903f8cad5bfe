package framework

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/musterhq/muster/api/scheme"
	"github.com/musterhq/muster/e2e/framework/provider"
)

// Scheme knows the built-in kinds and Muster's.
var Scheme = scheme.Scheme

// Cluster is a typed handle on one cluster of a fleet.
type Cluster struct {
	Name string
	Role provider.Role
	// Kubeconfig is the path of the cluster's admin kubeconfig.
	Kubeconfig string
	Config     *rest.Config
	Client     client.Client
	Clientset  kubernetes.Interface
}

// connect builds clients for a cluster from its kubeconfig. Tests drive clusters hard,
// so the client-side rate limits are far above client-go's defaults.
func connect(name string, role provider.Role, kubeconfig string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	return &Cluster{Name: name, Role: role, Kubeconfig: kubeconfig, Config: cfg, Client: c, Clientset: cs}, nil
}
