package inventory

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/go-memdb"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/musterhq/muster/api/nodeshape"
	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// Tables: nodesTable holds one row per node; slicesTable one sliceIndex per NodeSlice,
// written in the same transactions, so that a snapshot's indexes hold its nodes.
const (
	nodesTable  = "nodes"
	slicesTable = "slices"
)

// Index names.
const (
	byID      = "id"
	byCluster = "cluster"
)

// node is one row: a member node, kept as a corev1.Node so that fitness checks need no
// conversion per query. The table answers which slice owns a node; queries read the
// slices' indexes, which hold the same nodes.
type node struct {
	ID      string // <cluster>/<node>
	Cluster string
	Slice   string // <namespace>/<name> of the NodeSlice that reported it
	Node    *corev1.Node
	// Taints and Allocatable number the node's lists among its slice's (traits.go).
	Taints, Allocatable uint32
}

var schema = &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
	nodesTable: {
		Name: nodesTable,
		Indexes: map[string]*memdb.IndexSchema{
			byID: {Name: byID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	},
	slicesTable: {
		Name: slicesTable,
		Indexes: map[string]*memdb.IndexSchema{
			byID:      {Name: byID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Key"}},
			byCluster: {Name: byCluster, Indexer: &memdb.StringFieldIndex{Field: "Cluster"}},
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
	if err := dropRows(txn, key); err != nil {
		return err
	}
	// One array per slice keeps a slice's nodes together in memory for the queries' scans.
	nodes := make([]corev1.Node, len(slice.Nodes))
	rows := make([]*node, len(slice.Nodes))
	displaced := map[string]bool{}
	repeated := false
	shared := newTraits()
	for i := range slice.Nodes {
		info := nodeshape.Resolve(&slice.Nodes[i], slice.Shapes)
		row := &node{ID: cluster + "/" + info.Name, Cluster: cluster, Slice: key, Node: &nodes[i]}
		fillNode(row, &info, shared)
		owner, err := ownerOf(txn, row.ID)
		switch {
		case err != nil:
			return err
		case owner == key:
			// The slice's old rows are dropped: an earlier entry of this one names the node.
			repeated = true
		case owner != "":
			displaced[owner] = true
		}
		if err := txn.Insert(nodesTable, row); err != nil {
			return fmt.Errorf("loading node %s: %w", row.ID, err)
		}
		rows[i] = row
	}
	if repeated {
		// The node's last entry replaced the earlier ones in the table: it alone counts.
		var err error
		if rows, err = owned(txn, rows); err != nil {
			return err
		}
	}
	if err := indexRows(txn, key, rows); err != nil {
		return err
	}
	for other := range displaced {
		if err := reindexSlice(txn, other); err != nil {
			return err
		}
	}
	txn.Commit()
	return nil
}

// ownerOf returns the slice that holds node id's row, or "" when none does. A node moves
// to the slice loaded last, so another owner's index must drop it.
func ownerOf(txn *memdb.Txn, id string) (string, error) {
	obj, err := txn.First(nodesTable, byID, id)
	switch {
	case err != nil:
		return "", fmt.Errorf("looking up node %s: %w", id, err)
	case obj == nil:
		return "", nil
	}
	return obj.(*node).Slice, nil
}

// indexOf returns the index of the slice key, or nil when the inventory holds none.
func indexOf(txn *memdb.Txn, key string) (*sliceIndex, error) {
	obj, err := txn.First(slicesTable, byID, key)
	if err != nil || obj == nil {
		return nil, err
	}
	return obj.(*sliceIndex), nil
}

// owned keeps of rows those the nodes table still holds: not replaced since by a row of
// another slice (or a later one of the same slice) that names the same node.
func owned(txn *memdb.Txn, rows []*node) ([]*node, error) {
	var out []*node
	for _, row := range rows {
		obj, err := txn.First(nodesTable, byID, row.ID)
		if err != nil {
			return nil, fmt.Errorf("looking up node %s: %w", row.ID, err)
		}
		if obj == row {
			out = append(out, row)
		}
	}
	return out, nil
}

// dropRows deletes the rows the slice key owns from the nodes table. Its index goes with
// the next indexRows, or stays for DeleteSlice to drop.
func dropRows(txn *memdb.Txn, key string) error {
	index, err := indexOf(txn, key)
	if err != nil || index == nil {
		return err
	}
	rows, err := owned(txn, index.rows)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if err := txn.Delete(nodesTable, row); err != nil {
			return fmt.Errorf("dropping node %s of slice %s: %w", row.ID, key, err)
		}
	}
	return nil
}

// reindexSlice rebuilds a slice's index from the rows it still owns.
func reindexSlice(txn *memdb.Txn, key string) error {
	index, err := indexOf(txn, key)
	if err != nil || index == nil {
		return err
	}
	rows, err := owned(txn, index.rows)
	if err != nil {
		return err
	}
	return indexRows(txn, key, rows)
}

// indexRows indexes rows, which the slice key owns, in name order; a slice that owns none
// has no index.
func indexRows(txn *memdb.Txn, key string, rows []*node) error {
	if len(rows) == 0 {
		_, err := txn.DeleteAll(slicesTable, byID, key)
		return err
	}
	// Rows of one slice share a cluster, so ID order is name order.
	slices.SortFunc(rows, func(a, b *node) int { return strings.Compare(a.ID, b.ID) })
	if err := txn.Insert(slicesTable, indexSlice(key, rows[0].Cluster, rows)); err != nil {
		return fmt.Errorf("indexing slice %s: %w", key, err)
	}
	return nil
}

// DeleteSlice drops every node a slice reported.
func (inv *Inventory) DeleteSlice(namespace, name string) error {
	key := namespace + "/" + name
	txn := inv.db.Txn(true)
	defer txn.Abort()
	if err := dropRows(txn, key); err != nil {
		return err
	}
	if _, err := txn.DeleteAll(slicesTable, byID, key); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// SliceKeys lists the <namespace>/<name> of every slice whose nodes the inventory holds.
func (inv *Inventory) SliceKeys() []string {
	it, err := inv.db.Txn(false).Get(slicesTable, byID)
	if err != nil {
		// Only an unknown table or index fails, and both are constants.
		panic(fmt.Sprintf("inventory schema: %v", err))
	}
	var keys []string
	for obj := it.Next(); obj != nil; obj = it.Next() {
		keys = append(keys, obj.(*sliceIndex).Key)
	}
	return keys
}

// The Ready condition of every node is one of these two shared slices: nodes are never
// written after loading, and a pointer the queries read on every node stays in cache.
var (
	readyConditions    = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	notReadyConditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
)

// fillNode writes into row's node the corev1.Node that fitness checks read, with the
// taints and allocatable lists shared among the slice's nodes.
func fillNode(row *node, info *musterv1.NodeInfo, shared *traits) {
	conditions := notReadyConditions
	if info.Ready {
		conditions = readyConditions
	}
	var taints []corev1.Taint
	var allocatable corev1.ResourceList
	taints, row.Taints = shared.internTaints(info.Taints)
	allocatable, row.Allocatable = shared.internAllocatable(info.Allocatable)
	*row.Node = corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: info.Name, Labels: info.Labels},
		Spec:       corev1.NodeSpec{Unschedulable: info.Unschedulable, Taints: taints},
		Status:     corev1.NodeStatus{Allocatable: allocatable, Conditions: conditions},
	}
}

// Nodes returns a cluster's nodes, sorted by name. They are shared: read, never write them.
func (inv *Inventory) Nodes(cluster string) []*corev1.Node {
	if cluster == "" {
		return nil
	}
	return inv.collect(cluster, func(s *sliceIndex) []*corev1.Node { return s.nodes })
}

// NodesWithLabel returns every node, in any cluster, that carries the label.
func (inv *Inventory) NodesWithLabel(key, value string) []*corev1.Node {
	return inv.collect("", func(s *sliceIndex) []*corev1.Node {
		var out []*corev1.Node
		for _, i := range s.labels[key][value] {
			out = append(out, s.nodes[i])
		}
		return out
	})
}

// collect gathers what pick takes from each slice of cluster, or of all, sorted by name.
func (inv *Inventory) collect(cluster string, pick func(*sliceIndex) []*corev1.Node) []*corev1.Node {
	it, err := slicesOf(inv.db.Txn(false), cluster)
	if err != nil {
		return nil
	}
	var out []*corev1.Node
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, pick(obj.(*sliceIndex))...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
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
