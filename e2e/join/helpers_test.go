//go:build e2e

package join

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

func waitFor(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, cond)
}

func schemaGVK(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}
