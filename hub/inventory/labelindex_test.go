package inventory

import (
	"runtime"
	"testing"

	"github.com/hashicorp/go-memdb"
)

// The label index is a per-slice map (key → value → positions in the slice's node array)
// rather than a go-memdb index. These benchmarks measure the alternative DESIGN once
// described, a go-memdb StringMapFieldIndex over the nodes' labels, against the map, on
// the 200 × 500-node fleet: what each holds in memory, what loading it costs, and what one
// lookup the queries make per term costs (rack=r07: 10 nodes in each of the 200 slices). The rows carry the labels in both cases
// (the inventory keeps them on its nodes anyway); BenchmarkLabelIndexLoadNone is the rows alone..

// labelRow is a nodes-table row carrying what a go-memdb label index reads.
type labelRow struct {
	ID, Slice string
	Pos       int32
	Labels    map[string]string
}

// labelSchema is the nodes table with its ID index and, if withLabels, the label index:
// the difference between the two is what the index costs.
func labelSchema(withLabels bool) *memdb.DBSchema {
	indexes := map[string]*memdb.IndexSchema{
		byID: {Name: byID, Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
	}
	if withLabels {
		indexes["label"] = &memdb.IndexSchema{Name: "label", AllowMissing: true, Indexer: &memdb.StringMapFieldIndex{Field: "Labels"}}
	}
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{nodesTable: {Name: nodesTable, Indexes: indexes}}}
}

func loadLabelsMemdb(b *testing.B, withLabels bool) *memdb.MemDB {
	db, err := memdb.NewMemDB(labelSchema(withLabels))
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range fleet200x500() {
		txn := db.Txn(true)
		for i, n := range s.Nodes {
			row := &labelRow{ID: s.ClusterName + "/" + n.Name, Slice: s.Namespace + "/" + s.Name, Pos: int32(i), Labels: n.Labels}
			if err := txn.Insert(nodesTable, row); err != nil {
				b.Fatal(err)
			}
		}
		txn.Commit()
	}
	return db
}

// loadLabelsMaps builds, beside the same rows as loadLabelsMemdb without its label index,
// the maps the inventory builds.
func loadLabelsMaps(b *testing.B) (*memdb.MemDB, []map[string]map[string][]int32) {
	rows := loadLabelsMemdb(b, false)
	var out []map[string]map[string][]int32
	for _, s := range fleet200x500() {
		labels := map[string]map[string][]int32{}
		for i, n := range s.Nodes {
			for k, v := range n.Labels {
				if labels[k] == nil {
					labels[k] = map[string][]int32{}
				}
				labels[k][v] = append(labels[k][v], int32(i))
			}
		}
		out = append(out, labels)
	}
	return rows, out
}

// heldBy reports the heap that load's result holds once the fleet it was built from is
// dropped, per node.
func heldBy(b *testing.B, load func() any) {
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		kept := load()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/100_000, "heap-B/node")
		runtime.KeepAlive(kept)
	}
}

func BenchmarkLabelIndexLoadNone(b *testing.B) {
	heldBy(b, func() any { return loadLabelsMemdb(b, false) })
}

func BenchmarkLabelIndexLoadMemdb(b *testing.B) {
	heldBy(b, func() any { return loadLabelsMemdb(b, true) })
}

func BenchmarkLabelIndexLoadMaps(b *testing.B) {
	heldBy(b, func() any {
		rows, maps := loadLabelsMaps(b)
		return []any{rows, maps}
	})
}

func BenchmarkLabelIndexLookupMemdb(b *testing.B) {
	db := loadLabelsMemdb(b, true)
	b.ReportAllocs()
	for b.Loop() {
		it, err := db.Txn(false).Get(nodesTable, "label", "rack", "r07")
		if err != nil {
			b.Fatal(err)
		}
		// The queries work slice by slice on positions: group the rows so.
		bySlice := map[string][]int32{}
		for obj := it.Next(); obj != nil; obj = it.Next() {
			row := obj.(*labelRow)
			bySlice[row.Slice] = append(bySlice[row.Slice], row.Pos)
		}
		if len(bySlice) != 200 || len(bySlice["muster-member-c000/c000-0"]) != 10 {
			b.Fatalf("rack r07: %d slices, %d nodes in c000", len(bySlice), len(bySlice["muster-member-c000/c000-0"]))
		}
	}
}

func BenchmarkLabelIndexLookupMaps(b *testing.B) {
	_, slices := loadLabelsMaps(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, labels := range slices {
			if len(labels["rack"]["r07"]) > 0 {
				n++
			}
		}
		if n != 200 || len(slices[0]["rack"]["r07"]) != 10 {
			b.Fatalf("rack r07: %d slices, %d nodes in c000", n, len(slices[0]["rack"]["r07"]))
		}
	}
}
