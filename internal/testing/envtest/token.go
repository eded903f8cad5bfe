package envtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
)

// WithToken makes the API server take the bearer token as user, in groups (a static token
// file): what a join line's bootstrap token is to the agent, for tests that register an
// agent against this control plane.
func WithToken(token, user string, groups ...string) Option {
	return func(env *crenvtest.Environment) error {
		dir, err := os.MkdirTemp("", "muster-envtest-token-")
		if err != nil {
			return err
		}
		path := filepath.Join(dir, "tokens.csv")
		line := fmt.Sprintf("%s,%s,%s,%q\n", token, user, user, strings.Join(groups, ","))
		if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
			return fmt.Errorf("writing the token file: %w", err)
		}
		env.ControlPlane.GetAPIServer().Configure().Set("token-auth-file", path)
		return nil
	}
}
