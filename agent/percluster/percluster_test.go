package percluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/multicluster-runtime/pkg/multicluster"
)

// member stands for an engaged cluster; two members are the same cluster only if they
// are the same pointer, as two engagements of one name are two cluster.Cluster values.
type member struct {
	cluster.Cluster
	name string
}

// fleet answers GetCluster from a map the test changes between calls.
type fleet struct {
	mu      sync.Mutex
	members map[multicluster.ClusterName]cluster.Cluster
	err     error
}

func (f *fleet) GetCluster(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if cl, ok := f.members[name]; ok {
		return cl, nil
	}
	return nil, multicluster.ErrClusterNotFound
}

func (f *fleet) set(name multicluster.ClusterName, cl cluster.Cluster) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cl == nil {
		delete(f.members, name)
		return
	}
	f.members[name] = cl
}

// state is what a reconciler keeps per cluster; made counts the values New made.
type state struct{ cluster string }

func newStore(made *int) *Store[*state] {
	return &Store[*state]{New: func(cl cluster.Cluster) *state {
		*made++
		return &state{cluster: cl.(*member).name}
	}}
}

func TestStoreKeepsOneValuePerEngagedCluster(t *testing.T) {
	c1, c1again, c2 := &member{name: "c1"}, &member{name: "c1 rejoined"}, &member{name: "c2"}
	for _, tc := range []struct {
		name string
		// steps change the fleet, then Get c1; want says which value Get returns ("" when
		// it fails) and same whether it is the value an earlier step last found.
		steps []func(*fleet)
		want  []string
		same  []bool
	}{{
		name:  "the value of a cluster is made once",
		steps: []func(*fleet){func(*fleet) {}, func(*fleet) {}},
		want:  []string{"c1", "c1"},
		same:  []bool{false, true},
	}, {
		name:  "another cluster's arrival leaves it alone",
		steps: []func(*fleet){func(*fleet) {}, func(f *fleet) { f.set("c2", c2) }},
		want:  []string{"c1", "c1"},
		same:  []bool{false, true},
	}, {
		name:  "a cluster engaged again under its name starts afresh",
		steps: []func(*fleet){func(*fleet) {}, func(f *fleet) { f.set("c1", c1again) }},
		want:  []string{"c1", "c1 rejoined"},
		same:  []bool{false, false},
	}, {
		name:  "a cluster that left and came back starts afresh",
		steps: []func(*fleet){func(*fleet) {}, func(f *fleet) { f.set("c1", nil) }, func(f *fleet) { f.set("c1", c1) }},
		want:  []string{"c1", "", "c1"},
		same:  []bool{false, false, false},
	}, {
		name:  "a failed lookup keeps the value",
		steps: []func(*fleet){func(*fleet) {}, func(f *fleet) { f.err = errors.New("provider down") }, func(f *fleet) { f.err = nil }},
		want:  []string{"c1", "", "c1"},
		same:  []bool{false, false, true},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fleet{members: map[multicluster.ClusterName]cluster.Cluster{"c1": c1}}
			var made int
			s := newStore(&made)
			var lastFound *state
			for i, step := range tc.steps {
				step(f)
				got, err := s.Get(t.Context(), f, "c1")
				name := ""
				if err == nil {
					name = got.cluster
				}
				if name != tc.want[i] {
					t.Fatalf("step %d: value of %q (err %v), want %q", i, name, err, tc.want[i])
				}
				if same := got != nil && got == lastFound; same != tc.same[i] {
					t.Fatalf("step %d: same value as the last one found is %v, want %v", i, same, tc.same[i])
				}
				if got != nil {
					lastFound = got
				}
			}
		})
	}
}

func TestStoreGetWrapsClusterNotFound(t *testing.T) {
	var made int
	_, err := newStore(&made).Get(t.Context(), &fleet{members: map[multicluster.ClusterName]cluster.Cluster{}}, "gone")
	if !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("error %v does not wrap ErrClusterNotFound", err)
	}
	if made != 0 {
		t.Fatalf("made %d values for a cluster that is not there", made)
	}
	if IgnoreGone(err) != nil {
		t.Fatalf("IgnoreGone kept %v: a request for a cluster that left would be retried forever", err)
	}
	if other := errors.New("hub unreachable"); !errors.Is(IgnoreGone(other), other) {
		t.Fatal("IgnoreGone dropped an error that is not about a cluster that left")
	}
}

// Reconciles of one cluster run in parallel: they must share one value, or each would
// keep expectations the others never see.
func TestStoreMakesOneValueUnderConcurrentRequests(t *testing.T) {
	f := &fleet{members: map[multicluster.ClusterName]cluster.Cluster{}}
	for i := range 4 {
		f.set(multicluster.ClusterName(fmt.Sprint("c", i)), &member{name: fmt.Sprint("c", i)})
	}
	var made int
	var mu sync.Mutex
	s := &Store[*state]{New: func(cl cluster.Cluster) *state {
		mu.Lock()
		made++
		mu.Unlock()
		return &state{cluster: cl.(*member).name}
	}}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			name := multicluster.ClusterName(fmt.Sprint("c", i%4))
			got, err := s.Get(context.Background(), f, name)
			if err != nil || got.cluster != string(name) {
				t.Errorf("Get(%s) = %v, %v", name, got, err)
			}
		})
	}
	wg.Wait()
	if made != 4 {
		t.Fatalf("made %d values for 4 clusters", made)
	}
}

// BenchmarkStoreGet is what the multicluster layer adds to every reconcile: finding the
// cluster and its value, with the workers of one cluster asking at once.
func BenchmarkStoreGet(b *testing.B) {
	f := &fleet{members: map[multicluster.ClusterName]cluster.Cluster{"c1": &member{name: "c1"}}}
	var made int
	s := newStore(&made)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Get(context.Background(), f, "c1"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
