package shards

import (
	"encoding/json"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// NewWork is the Work named name that carries obj, one shard's member object, to cluster:
// in the cluster's member namespace, labelled with labels and the cluster, and deleting
// obj in the member when the Work goes.
func NewWork(name, cluster string, labels map[string]string, obj any) (*musterv1.Work, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding the shard for cluster %s: %w", cluster, err)
	}
	l := make(map[string]string, len(labels)+1)
	maps.Copy(l, labels)
	l[musterv1.ClusterNameLabel] = cluster
	return &musterv1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: musterv1.MemberNamespace(cluster), Labels: l},
		Spec: musterv1.WorkSpec{
			Manifests:    []musterv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}},
			DeleteOption: &musterv1.DeleteOption{PropagationPolicy: musterv1.DeletePropagationDelete},
		},
	}, nil
}

// Decode returns the member object a Work carries, as an O, and the status of type S its
// agent fed back for it (nil before the first report). A Work that does not carry exactly
// one manifest was not written by NewWork.
func Decode[O, S any](work *musterv1.Work) (*O, *S, error) {
	if len(work.Spec.Manifests) != 1 {
		return nil, nil, fmt.Errorf("work %s/%s carries %d manifests, want 1", work.Namespace, work.Name, len(work.Spec.Manifests))
	}
	obj := new(O)
	if err := json.Unmarshal(work.Spec.Manifests[0].Raw, obj); err != nil {
		return nil, nil, fmt.Errorf("decoding the shard in work %s/%s: %w", work.Namespace, work.Name, err)
	}
	fed := work.Status.Manifests
	if len(fed) == 0 || fed[0].Status == nil || len(fed[0].Status.Raw) == 0 {
		return obj, nil, nil
	}
	status := new(S)
	if err := json.Unmarshal(fed[0].Status.Raw, status); err != nil {
		return obj, nil, fmt.Errorf("decoding the shard status in work %s/%s: %w", work.Namespace, work.Name, err)
	}
	return obj, status, nil
}
