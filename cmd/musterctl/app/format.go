package app

import (
	"fmt"
	"strings"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

func count(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func ptrOr(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func orPending(s string) string {
	if s == "" {
		return "Pending"
	}
	return s
}

func phaseOrPending(p musterv1.BroadcastJobPhase) string { return orPending(string(p)) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func joinComma(parts []string) string { return strings.Join(parts, ", ") }
