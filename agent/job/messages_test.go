package job

import "testing"

func TestUnschedulableMessage(t *testing.T) {
	for count, want := range map[int]string{
		1: "1 pod cannot be scheduled: 0/3 nodes are available",
		2: "2 pods cannot be scheduled: 0/3 nodes are available",
	} {
		if got := unschedulableMessage(count, "0/3 nodes are available"); got != want {
			t.Errorf("unschedulableMessage(%d) = %q, want %q", count, got, want)
		}
	}
}
