package framework

import (
	"fmt"
	"os"

	"github.com/musterhq/muster/e2e/framework/kind"
	"github.com/musterhq/muster/e2e/framework/local"
	"github.com/musterhq/muster/e2e/framework/provider"
	"github.com/musterhq/muster/e2e/toolchain"
)

// ProviderEnv selects the cluster provider: local (default) or kind.
const ProviderEnv = "MUSTER_E2E_PROVIDER"

// NewProvider returns the named provider, or the one $MUSTER_E2E_PROVIDER names when name
// is empty, defaulting to local. Providers keep their state under dir.
func NewProvider(name, dir string) (provider.ClusterProvider, error) {
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
		return kind.New(), nil
	default:
		return nil, fmt.Errorf("unknown cluster provider %q in %s: want %s or %s", name, ProviderEnv, local.ProviderName, kind.ProviderName)
	}
}
