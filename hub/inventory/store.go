package inventory

import (
	"fmt"
	"sort"

	"github.com/hashicorp/go-memdb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
	"github.com/musterhq/muster/placement/nodefit"
)

const nodesTable = "nodes"

// Index names of the nodes table.
const (
	byID      = "id"
	byCluster = "cluster"
	bySlice   = "slice"
	byLabel   = "label"
)

// node is one row: a member node, kept as a corev1.Node so that fitness checks need no
// conversion per query.
type node struct {
	ID      string // <cluster>/<node>
	Cluster string
	Slice   string // <namespace>/<name> of the NodeSlice that reported it
	Labels  map[string]string
	Node    *corev1.Node
}

var schema = &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
	nodesTable: {
		Name: nodesTable,
		Indexes: map[string]*memdb.IndexSchema{
			byID:      {Name: byID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
			byCluster: {Name: byCluster, Indexer: &memdb.StringFieldIndex{Field: "Cluster"}},
			bySlice:   {Name: bySlice, Indexer: &memdb.StringFieldIndex{Field: "Slice"}},
			byLabel:   {Name: byLabel, AllowMissing: true, Indexer: &memdb.StringMapFieldIndex{Field: "Labels"}},
		},
	},
}}

// Inventory is safe for concurrent use: readers see consistent snapshots while slices
// are replaced.
type Inventory struct {
	db *memdb.MemDB
}

// New returns an empty inventory.
func New() *Inventory {
	db, err := memdb.NewMemDB(schema)
	if err != nil {
		// The schema is a constant; an error here is a programming mistake.
		panic(fmt.Sprintf("inventory schema: %v", err))
	}
	return &Inventory{db: db}
}

// ReplaceSlice makes the inventory hold exactly the slice's nodes for that slice, in one
// transaction, attributing them to cluster.
func (inv *Inventory) ReplaceSlice(cluster string, slice *musterv1.NodeSlice) error {
	key := slice.Namespace + "/" + slice.Name
	txn := inv.db.Txn(true)
	defer txn.Abort()
	if _, err := txn.DeleteAll(nodesTable, bySlice, key); err != nil {
		return fmt.Errorf("dropping slice %s: %w", key, err)
	}
	for i := range slice.Nodes {
		info := &slice.Nodes[i]
		row := &node{ID: cluster + "/" + info.Name, Cluster: cluster, Slice: key, Labels: info.Labels, Node: toNode(info)}
		if err := txn.Insert(nodesTable, row); err != nil {
			return fmt.Errorf("loading node %s: %w", row.ID, err)
		}
	}
	txn.Commit()
	return nil
}

// DeleteSlice drops every node a slice reported.
func (inv *Inventory) DeleteSlice(namespace, name string) error {
	txn := inv.db.Txn(true)
	defer txn.Abort()
	if _, err := txn.DeleteAll(nodesTable, bySlice, namespace+"/"+name); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// toNode builds the corev1.Node that fitness checks read.
func toNode(info *musterv1.NodeInfo) *corev1.Node {
	ready := corev1.ConditionFalse
	if info.Ready {
		ready = corev1.ConditionTrue
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: info.Name, Labels: info.Labels},
		Spec:       corev1.NodeSpec{Unschedulable: info.Unschedulable, Taints: info.Taints},
		Status: corev1.NodeStatus{
			Allocatable: info.Allocatable,
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
		},
	}
}

// Nodes returns a cluster's nodes, sorted by name.
func (inv *Inventory) Nodes(cluster string) []*corev1.Node {
	return inv.collect(byCluster, cluster)
}

// NodesWithLabel returns every node, in any cluster, that carries the label.
func (inv *Inventory) NodesWithLabel(key, value string) []*corev1.Node {
	return inv.collect(byLabel, key, value)
}

func (inv *Inventory) collect(index string, args ...any) []*corev1.Node {
	txn := inv.db.Txn(false)
	it, err := txn.Get(nodesTable, index, args...)
	if err != nil {
		return nil
	}
	var out []*corev1.Node
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*node).Node)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// EligibleNodes returns the names of a cluster's nodes that could run a pod of spec.
func (inv *Inventory) EligibleNodes(cluster string, spec *corev1.PodSpec) []string {
	tmpl := nodefit.NewTemplate(spec)
	var names []string
	for _, n := range inv.Nodes(cluster) {
		if tmpl.Check(n) == nodefit.Fits {
			names = append(names, n.Name)
		}
	}
	return names
}

// EligibleNodesByCluster answers EligibleNodes for every cluster at once; clusters with
// no eligible node are left out.
func (inv *Inventory) EligibleNodesByCluster(spec *corev1.PodSpec) map[string][]string {
	tmpl := nodefit.NewTemplate(spec)
	out := map[string][]string{}
	txn := inv.db.Txn(false)
	it, err := txn.Get(nodesTable, byCluster)
	if err != nil {
		return out
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		row := obj.(*node)
		if tmpl.Check(row.Node) == nodefit.Fits {
			out[row.Cluster] = append(out[row.Cluster], row.Node.Name)
		}
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

// Capacity sums the allocatable resources of a cluster's ready, schedulable nodes.
func (inv *Inventory) Capacity(cluster string) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, n := range inv.Nodes(cluster) {
		if n.Spec.Unschedulable || n.Status.Conditions[0].Status != corev1.ConditionTrue {
			continue
		}
		for name, q := range n.Status.Allocatable {
			sum := total[name]
			if sum.Format == "" {
				sum = *resource.NewQuantity(0, q.Format)
			}
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}
