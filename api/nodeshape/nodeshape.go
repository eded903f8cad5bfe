// Package nodeshape writes what the nodes of one NodeSlice have in common once, as
// NodeShapes, and reads each node back from its shape. The agent splits its nodes into
// shapes when it builds a slice; the hub resolves every node when it loads one. A
// resolved node is what the agent read from its cluster: labels, taints and allocatable
// resources, whether a shape carried them or the node did.
package nodeshape

import (
	"encoding/json"
	"maps"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// maxSharedValues is how many values a label key may take among a slice's nodes and still
// be carried by shapes. A key with more (the hostname, a node's cloud instance ID) is each
// node's own: in a shape it would make one shape per node.
const maxSharedValues = 8

// Split lays the common parts of nodes, the full NodeInfos of one slice, into shapes and
// returns them with nodes that name their shape and keep only their own labels. Shapes
// are numbered in the order nodes first use them, so equal nodes give equal slices.
func Split(nodes []musterv1.NodeInfo) ([]musterv1.NodeShape, []musterv1.NodeInfo) {
	own := ownKeys(nodes)
	var shapes []musterv1.NodeShape
	index := map[string]int32{}
	out := make([]musterv1.NodeInfo, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		shared, mine := partition(n.Labels, own)
		shape := musterv1.NodeShape{Labels: shared, Taints: n.Taints, Allocatable: n.Allocatable}
		k := key(&shape)
		at, ok := index[k]
		if !ok {
			at = int32(len(shapes))
			index[k] = at
			shapes = append(shapes, shape)
		}
		out[i] = musterv1.NodeInfo{Name: n.Name, Shape: &at, Labels: mine, Unschedulable: n.Unschedulable, Ready: n.Ready}
	}
	return shapes, out
}

// Resolve returns node with what its shape carries: the shape's labels with the node's
// own added over them, the shape's taints followed by the node's, and the shape's
// allocatable resources with the node's in place of the same ones. A node that names no
// shape, or one the slice does not have, is returned as it is. What it returns may share
// maps and lists with node and shapes: read it, never write it.
func Resolve(node *musterv1.NodeInfo, shapes []musterv1.NodeShape) musterv1.NodeInfo {
	if node.Shape == nil || *node.Shape < 0 || int(*node.Shape) >= len(shapes) {
		return *node
	}
	shape := &shapes[*node.Shape]
	out := *node
	out.Shape = nil
	out.Labels = overlay(shape.Labels, node.Labels)
	out.Allocatable = overlay(shape.Allocatable, node.Allocatable)
	if len(shape.Taints) > 0 {
		out.Taints = append(shape.Taints[:len(shape.Taints):len(shape.Taints)], node.Taints...)
	}
	return out
}

// overlay is base with top's entries added over it: one of them when the other is empty,
// else a new map.
func overlay[M ~map[K]V, K comparable, V any](base, top M) M {
	switch {
	case len(top) == 0:
		return base
	case len(base) == 0:
		return top
	}
	out := make(M, len(base)+len(top))
	maps.Copy(out, base)
	maps.Copy(out, top)
	return out
}

// ownKeys are the label keys with more than maxSharedValues values among nodes.
func ownKeys(nodes []musterv1.NodeInfo) map[string]bool {
	values := map[string]map[string]bool{}
	own := map[string]bool{}
	for i := range nodes {
		for k, v := range nodes[i].Labels {
			if own[k] {
				continue
			}
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			values[k][v] = true
			if len(values[k]) > maxSharedValues {
				own[k] = true
				delete(values, k)
			}
		}
	}
	return own
}

// partition splits labels into those shapes carry and the node's own (nil when none).
func partition(labels map[string]string, own map[string]bool) (shared, mine map[string]string) {
	for k, v := range labels {
		if own[k] {
			mine = put(mine, k, v)
		} else {
			shared = put(shared, k, v)
		}
	}
	return shared, mine
}

// put sets k to v in m, made when nil, and returns m.
func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// key identifies a shape: its JSON, in which maps are written in key order and
// quantities in their canonical form.
func key(shape *musterv1.NodeShape) string {
	b, err := json.Marshal(shape)
	if err != nil {
		// Labels, taints and quantities always encode; this is a programming mistake.
		panic(err)
	}
	return string(b)
}
