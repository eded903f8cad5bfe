// Package memberid reads a member cluster's ID, which `musterctl join` records on the
// MemberCluster and the agent checks before it registers: both must read it the same way.
package memberid

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ClusterID identifies a member cluster by the UID of its kube-system namespace, which
// lives as long as the cluster and differs between clusters of the same name.
func ClusterID(ctx context.Context, member kubernetes.Interface) (string, error) {
	ns, err := member.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the cluster ID (kube-system's UID): %w", err)
	}
	return string(ns.UID), nil
}
