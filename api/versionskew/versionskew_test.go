package versionskew_test

import (
	"strings"
	"testing"

	"github.com/musterhq/muster/api/versionskew"
)

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		hub, agent string
		supported  bool
		known      bool
		reason     string
	}{
		{"v0.4.0", "v0.4.0", true, true, versionskew.ReasonSupported},
		{"v0.4.2", "v0.4.0", true, true, versionskew.ReasonSupported},
		{"v0.4.0", "v0.4.7", true, true, versionskew.ReasonSupported}, // a newer patch of the same minor
		{"v0.4.0", "v0.3.9", true, true, versionskew.ReasonSupported}, // one minor behind: mid-rollout
		{"v0.4.0", "v0.2.0", false, true, versionskew.ReasonAgentTooOld},
		{"v0.4.0", "v0.5.0", false, true, versionskew.ReasonAgentNewer},
		{"v1.0.0", "v0.9.0", false, true, versionskew.ReasonAgentTooOld}, // a major apart
		{"v1.0.0", "v2.0.0", false, true, versionskew.ReasonAgentNewer},
		{"v1.1.0", "v1.0.3", true, true, versionskew.ReasonSupported},
		// Pre-releases and builds past a tag count as their minor version.
		{"v0.5.0-rc.1", "v0.4.0", true, true, versionskew.ReasonSupported},
		{"v0.4.0-12-g6c74c5d", "v0.4.0", true, true, versionskew.ReasonSupported},
		{"v0.4.0", "v0.5.0-rc.1", false, true, versionskew.ReasonAgentNewer},
		// What the policy cannot judge.
		{"devel", "v0.4.0", false, false, versionskew.ReasonUnversioned},
		{"v0.4.0", "6c74c5d", false, false, versionskew.ReasonUnversioned},
		{"v0.4.0", "", false, false, versionskew.ReasonAgentNotReporting},
	} {
		v := versionskew.Judge(c.hub, c.agent)
		if v.Supported != c.supported || v.Known != c.known || v.Reason != c.reason {
			t.Errorf("hub %s, agent %s: %+v, want supported=%v known=%v reason %s", c.hub, c.agent, v, c.supported, c.known, c.reason)
		}
		if c.agent != "" && !strings.Contains(v.Message, c.agent) {
			t.Errorf("hub %s, agent %s: message %q does not name the agent's version", c.hub, c.agent, v.Message)
		}
	}
}
