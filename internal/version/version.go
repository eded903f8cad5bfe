// Package version is the version of Muster's binaries (muster-hub, muster-agent): what an
// agent reports to the hub, and what the hub compares it with under the skew policy.
package version

import "runtime/debug"

// version is stamped by the Makefile (-X …/internal/version.version=…); builds without it
// report the module version Go recorded.
var version = ""

// Get is the stamped version, or the module version, or "devel".
func Get() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
