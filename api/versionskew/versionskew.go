// Package versionskew is the policy of which agent versions a hub supports: an agent may
// run the hub's minor version or the one before it (same major; any patch), never a
// newer one. A hub upgrades first, then its agents; during that rollout every agent is one
// minor behind at most. An agent newer than its hub may write fields the hub's API does
// not know, and one two minors behind may miss what the hub now expects of it.
package versionskew

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/version"
)

// Verdict is what the policy says of one agent.
type Verdict struct {
	// Supported is true within the policy; Known is false when either version is not a
	// release's (a development build, a bare commit), which the policy cannot judge.
	Supported, Known bool
	// Reason is a CamelCase word for a condition; Message says why.
	Reason, Message string
}

// Reasons of the verdicts.
const (
	ReasonSupported         = "WithinSkewPolicy"
	ReasonAgentNewer        = "AgentNewerThanHub"
	ReasonAgentTooOld       = "AgentTooOld"
	ReasonUnversioned       = "UnversionedBuild"
	ReasonAgentNotReporting = "AgentVersionNotReported"
)

// Judge applies the policy to an agent at agentVersion under a hub at hubVersion.
func Judge(hubVersion, agentVersion string) Verdict {
	if agentVersion == "" {
		return Verdict{Reason: ReasonAgentNotReporting, Message: "the agent has not reported its version (an agent built before it did, or not yet reporting)"}
	}
	hub, hubErr := version.ParseSemantic(hubVersion)
	agent, agentErr := version.ParseSemantic(agentVersion)
	if hubErr != nil || agentErr != nil {
		return Verdict{Reason: ReasonUnversioned, Message: fmt.Sprintf(
			"hub %s and agent %s: the skew policy judges release versions (vMAJOR.MINOR.PATCH) only", hubVersion, agentVersion)}
	}
	// Compare releases: a pre-release or a build past a tag (v0.3.0-5-gabc) is judged as
	// the release it is on the way to or from.
	hubMinor, agentMinor := version.MajorMinor(hub.Major(), hub.Minor()), version.MajorMinor(agent.Major(), agent.Minor())
	switch {
	case agentMinor.GreaterThan(hubMinor):
		return Verdict{Known: true, Reason: ReasonAgentNewer, Message: fmt.Sprintf(
			"agent %s is newer than hub %s: upgrade the hub first, or run the agent at %d.%d", agentVersion, hubVersion, hub.Major(), hub.Minor())}
	case agent.Major() != hub.Major() || hub.Minor()-agent.Minor() > 1:
		return Verdict{Known: true, Reason: ReasonAgentTooOld, Message: fmt.Sprintf(
			"agent %s is more than one minor version behind hub %s: upgrade the agent", agentVersion, hubVersion)}
	}
	return Verdict{Supported: true, Known: true, Reason: ReasonSupported, Message: fmt.Sprintf(
		"agent %s under hub %s: the same minor version or one behind", agentVersion, hubVersion)}
}
