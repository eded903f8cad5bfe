package local

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// FakeNodeLabel marks the nodes this provider creates.
const FakeNodeLabel = "e2e.muster.dev/fake-node"

// NewNode returns a fake node with room for a realistic number of pods; kwok makes it
// Ready once it is created. Tests change labels, taints or allocatable before creating it.
func NewNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				FakeNodeLabel:                    "true",
				corev1.LabelHostname:             name,
				corev1.LabelOSStable:             "linux",
				corev1.LabelArchStable:           "amd64",
				"node-role.kubernetes.io/worker": "",
			},
		},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("8"),
				corev1.ResourceMemory: resource.MustParse("32Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
		},
	}
}

// CreateNodes creates fake nodes, keeping the allocatable each one asks for: the create
// call drops status, so it is written again through the status subresource.
func CreateNodes(ctx context.Context, cs kubernetes.Interface, nodes ...*corev1.Node) error {
	for _, n := range nodes {
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("creating node %s: %w", n.Name, err)
		}
		if len(created.Status.Allocatable) == 0 && len(n.Status.Allocatable) > 0 {
			created.Status.Allocatable = n.Status.Allocatable
			created.Status.Capacity = n.Status.Allocatable
			if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("setting allocatable of node %s: %w", n.Name, err)
			}
		}
	}
	return nil
}

func createDefaultNodes(ctx context.Context, kubeconfigPath, cluster string, count int) error {
	if count == 0 {
		return nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfigPath)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes := make([]*corev1.Node, 0, count)
	for i := range count {
		nodes = append(nodes, NewNode(fmt.Sprintf("%s-node-%d", cluster, i)))
	}
	return CreateNodes(ctx, cs, nodes...)
}
