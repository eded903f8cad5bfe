package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/musterhq/muster/e2e/framework/provider"
)

// FleetOptions describes a fleet to bring up.
type FleetOptions struct {
	// Dir holds the fleet's kubeconfigs (Dir/kubeconfig/<cluster>.kubeconfig), its state
	// file and the provider's files.
	Dir string
	// Provider is local or kind; empty means $MUSTER_E2E_PROVIDER, then local.
	Provider string
	// Members is the number of member clusters, named member1 … memberN.
	Members int
	// NodesPerMember is the number of worker nodes of each member. The hub has none.
	NodesPerMember int
	// HubSigningDuration caps the lifetime of agent certificates (zero: the default).
	HubSigningDuration time.Duration
}

// Fleet is a hub and its member clusters.
type Fleet struct {
	Dir      string
	Provider provider.ClusterProvider
	Hub      *Cluster
	Members  []*Cluster
}

// fleetState is what Dir/fleet.json records, so that another process (make fleet-down,
// a later test run) can find and tear down the fleet.
type fleetState struct {
	Provider string          `json:"provider"`
	Clusters []clusterRecord `json:"clusters"`
}

type clusterRecord struct {
	Name       string        `json:"name"`
	Role       provider.Role `json:"role"`
	Kubeconfig string        `json:"kubeconfig"`
}

const stateFile = "fleet.json"

// KubeconfigPath is where a fleet in dir keeps a cluster's kubeconfig.
func KubeconfigPath(dir, cluster string) string {
	return filepath.Join(dir, "kubeconfig", cluster+".kubeconfig")
}

// Up creates the hub and the members, waits until every cluster serves requests and every
// member's nodes are Ready, and returns them. A provider that can (ConcurrentCreator) starts
// them all at once; others one after another. On failure everything already created is
// torn down.
func Up(ctx context.Context, opts FleetOptions) (*Fleet, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "kubeconfig"), 0o755); err != nil {
		return nil, err
	}
	p, err := newProvider(ctx, opts.Provider, dir, true)
	if err != nil {
		return nil, err
	}
	f := &Fleet{Dir: dir, Provider: p}
	specs := []provider.ClusterSpec{{Name: "hub", Role: provider.RoleHub, SigningDuration: opts.HubSigningDuration}}
	for i := 1; i <= opts.Members; i++ {
		specs = append(specs, provider.ClusterSpec{Name: fmt.Sprintf("member%d", i), Role: provider.RoleMember, Nodes: opts.NodesPerMember})
	}
	// Recorded before creating, so that a crash mid-way can still be cleaned up.
	state := fleetState{Provider: p.Name()}
	for _, spec := range specs {
		state.Clusters = append(state.Clusters, clusterRecord{Name: spec.Name, Role: spec.Role, Kubeconfig: KubeconfigPath(dir, spec.Name)})
	}
	if err := writeState(dir, state); err != nil {
		return nil, err
	}
	clusters, err := createClusters(ctx, p, dir, specs)
	if err != nil {
		return nil, errors.Join(err, f.Down(context.WithoutCancel(ctx)))
	}
	f.Hub, f.Members = clusters[0], clusters[1:]
	return f, nil
}

// createClusters creates specs' clusters, concurrently when the provider allows it, and
// returns them in specs' order once each serves and has its nodes Ready.
func createClusters(ctx context.Context, p provider.ClusterProvider, dir string, specs []provider.ClusterSpec) ([]*Cluster, error) {
	clusters := make([]*Cluster, len(specs))
	// The first failure cancels the others: nothing waits minutes for a fleet already lost.
	g, ctx := errgroup.WithContext(ctx)
	if c, ok := p.(provider.ConcurrentCreator); !ok || !c.CreatesConcurrently() {
		g.SetLimit(1)
	}
	for i, spec := range specs {
		g.Go(func() error {
			c, err := createCluster(ctx, p, spec, KubeconfigPath(dir, spec.Name))
			clusters[i] = c
			return err
		})
	}
	return clusters, g.Wait()
}

// AddMember creates one more member cluster, member<N+1>, with nodes worker nodes, and
// records it so that Down deletes it too.
func (f *Fleet) AddMember(ctx context.Context, nodes int) (*Cluster, error) {
	state, err := readState(f.Dir)
	if err != nil {
		return nil, err
	}
	spec := provider.ClusterSpec{Name: fmt.Sprintf("member%d", len(f.Members)+1), Role: provider.RoleMember, Nodes: nodes}
	kubeconfig := KubeconfigPath(f.Dir, spec.Name)
	state.Clusters = append(state.Clusters, clusterRecord{Name: spec.Name, Role: spec.Role, Kubeconfig: kubeconfig})
	if err := writeState(f.Dir, state); err != nil {
		return nil, err
	}
	c, err := createCluster(ctx, f.Provider, spec, kubeconfig)
	if err != nil {
		return nil, err
	}
	f.Members = append(f.Members, c)
	return c, nil
}

// createCluster creates one cluster and waits until it serves and its nodes are Ready.
func createCluster(ctx context.Context, p provider.ClusterProvider, spec provider.ClusterSpec, kubeconfig string) (*Cluster, error) {
	if err := p.CreateCluster(ctx, spec, kubeconfig); err != nil {
		return nil, err
	}
	c, err := connect(spec.Name, spec.Role, kubeconfig)
	if err != nil {
		return nil, err
	}
	return c, WaitForClusterReady(ctx, c, spec.Nodes, 2*time.Minute)
}

// Clusters returns the hub followed by the members.
func (f *Fleet) Clusters() []*Cluster {
	all := []*Cluster{}
	if f.Hub != nil {
		all = append(all, f.Hub)
	}
	return append(all, f.Members...)
}

// Down deletes every cluster of the fleet and its state file.
func (f *Fleet) Down(ctx context.Context) error {
	return Down(ctx, f.Dir)
}

// Down deletes every cluster recorded in dir's state file; a directory without a fleet is
// not an error.
func Down(ctx context.Context, dir string) error {
	state, err := readState(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	p, err := NewProvider(state.Provider, dir)
	if err != nil {
		return err
	}
	// Muster's processes first: they talk to the clusters.
	errs := []error{stopDetached(dir)}
	var mu sync.Mutex
	deleteCluster := func(c clusterRecord) {
		err := p.DeleteCluster(ctx, c.Name, c.Kubeconfig)
		if err == nil {
			_ = os.Remove(c.Kubeconfig)
		}
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	// Members first, all at once: they depend on the hub, not on each other.
	var members sync.WaitGroup
	for _, c := range state.Clusters {
		if c.Role != provider.RoleHub {
			members.Go(func() { deleteCluster(c) })
		}
	}
	members.Wait()
	for _, c := range state.Clusters {
		if c.Role == provider.RoleHub {
			deleteCluster(c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.Remove(filepath.Join(dir, stateFile))
}

// Connect returns handles on a fleet that is already up in dir.
func Connect(dir string) (*Fleet, error) {
	state, err := readState(dir)
	if err != nil {
		return nil, fmt.Errorf("no fleet in %s: %w", dir, err)
	}
	p, err := NewProvider(state.Provider, dir)
	if err != nil {
		return nil, err
	}
	f := &Fleet{Dir: dir, Provider: p}
	for _, rec := range state.Clusters {
		c, err := connect(rec.Name, rec.Role, rec.Kubeconfig)
		if err != nil {
			return nil, err
		}
		if rec.Role == provider.RoleHub {
			f.Hub = c
		} else {
			f.Members = append(f.Members, c)
		}
	}
	return f, nil
}

func writeState(dir string, s fleetState) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, stateFile), raw, 0o644)
}

func readState(dir string) (fleetState, error) {
	var s fleetState
	raw, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(raw, &s)
}

// restartable providers can stop a cluster and start it again with its state.
type restartable interface {
	StopCluster(ctx context.Context, name string) error
	StartCluster(ctx context.Context, name string) error
}

// StopCluster takes a cluster down, keeping its state.
func (f *Fleet) StopCluster(ctx context.Context, c *Cluster) error {
	r, ok := f.Provider.(restartable)
	if !ok {
		return fmt.Errorf("the %s provider cannot stop and restart clusters", f.Provider.Name())
	}
	return r.StopCluster(ctx, c.Name)
}

// StartCluster brings a stopped cluster back.
func (f *Fleet) StartCluster(ctx context.Context, c *Cluster) error {
	r, ok := f.Provider.(restartable)
	if !ok {
		return fmt.Errorf("the %s provider cannot stop and restart clusters", f.Provider.Name())
	}
	return r.StartCluster(ctx, c.Name)
}
