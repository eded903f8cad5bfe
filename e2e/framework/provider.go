package framework

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/musterhq/muster/e2e/engine"
	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/e2e/framework/local"
	"github.com/musterhq/muster/e2e/framework/provider"
	"github.com/musterhq/muster/e2e/nodeimage"
	"github.com/musterhq/muster/internal/testing/toolchain"
)

// ProviderEnv selects the cluster provider: local (default) or kind.
const ProviderEnv = "MUSTER_E2E_PROVIDER"

// NewProvider returns the named provider, or the one $MUSTER_E2E_PROVIDER names when name
// is empty, defaulting to local. Providers keep their state under dir. It is what reaches
// and deletes existing clusters; Up creates them with newProvider(..., forCreate=true),
// which first readies a kind provider's engine and node image.
func NewProvider(name, dir string) (provider.ClusterProvider, error) {
	return newProvider(context.Background(), name, dir, false)
}

func newProvider(ctx context.Context, name, dir string, forCreate bool) (provider.ClusterProvider, error) {
	if name == "" {
		name = os.Getenv(ProviderEnv)
	}
	switch name {
	case "", local.ProviderName:
		cacheDir, err := toolchain.CacheDir()
		if err != nil {
			return nil, err
		}
		tc, err := toolchain.Locate(cacheDir)
		if err != nil {
			return nil, err
		}
		return local.New(tc, dir), nil
	case kind.ProviderName:
		if !forCreate {
			return kind.New(kind.Options{}), nil
		}
		return NewKindProvider(ctx, os.Stderr)
	default:
		return nil, fmt.Errorf("unknown cluster provider %q in %s: want %s or %s", name, ProviderEnv, local.ProviderName, kind.ProviderName)
	}
}

// NewKindProvider readies what kind clusters need on this machine, a container engine
// (started here if none runs) and a node image ($MUSTER_KIND_NODE_IMAGE, or one built here
// from the module proxy and cached), and returns the kind provider using them.
func NewKindProvider(ctx context.Context, log io.Writer) (*kind.Provider, error) {
	cacheDir, err := toolchain.CacheDir()
	if err != nil {
		return nil, err
	}
	if err := engine.Ensure(ctx, cacheDir, log); err != nil {
		return nil, err
	}
	image, err := nodeimage.Ensure(ctx, cacheDir, log)
	if err != nil {
		return nil, err
	}
	return kind.New(kind.Options{NodeImage: image, BridgeNetwork: os.Getenv(nodeimage.ImageEnv) == ""}), nil
}
