package podcontrol

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBatchSizes(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want []int
	}{
		{0, nil},
		{1, []int{1}},
		{2, []int{1, 1}},
		{3, []int{1, 2}},
		{7, []int{1, 2, 4}},
		{10, []int{1, 2, 4, 3}},
		{100, []int{1, 2, 4, 8, 16, 32, 37}},
	} {
		if diff := cmp.Diff(tc.want, batchSizes(tc.n)); diff != "" {
			t.Errorf("batchSizes(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
}

// TestSlowStartStopsAfterTheBatchThatFailed: the batch holding the first failure runs to
// its end (its calls run at once), and no later batch starts.
func TestSlowStartStopsAfterTheBatchThatFailed(t *testing.T) {
	for _, tc := range []struct {
		name          string
		n             int
		fail          []int
		wantCalled    int
		wantSucceeded int
		wantErr       string
	}{
		{name: "nothing to do", n: 0},
		{name: "every call succeeds", n: 10, wantCalled: 10, wantSucceeded: 10},
		{name: "the first call fails: nothing more is tried", n: 10, fail: []int{0}, wantCalled: 1, wantErr: "call 0"},
		{name: "a failure in the second batch ends after it", n: 10, fail: []int{2}, wantCalled: 3, wantSucceeded: 2, wantErr: "call 2"},
		{name: "a failure early in the third batch: the rest of that batch still runs", n: 10, fail: []int{3}, wantCalled: 7, wantSucceeded: 6, wantErr: "call 3"},
		{name: "two failures in one batch: the first by index is returned", n: 10, fail: []int{6, 4}, wantCalled: 7, wantSucceeded: 5, wantErr: "call 4"},
		{name: "a failure in the last batch", n: 10, fail: []int{9}, wantCalled: 10, wantSucceeded: 9, wantErr: "call 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var called []int
			succeeded, err := slowStart(tc.n, func(i int) error {
				mu.Lock()
				called = append(called, i)
				mu.Unlock()
				if slices.Contains(tc.fail, i) {
					return fmt.Errorf("call %d", i)
				}
				return nil
			})
			slices.Sort(called)
			if want := indexes(tc.wantCalled); !slices.Equal(called, want) {
				t.Errorf("called %v, want %v", called, want)
			}
			if succeeded != tc.wantSucceeded {
				t.Errorf("succeeded = %d, want %d", succeeded, tc.wantSucceeded)
			}
			if got := errString(err); got != tc.wantErr {
				t.Errorf("error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestForEachReturnsTheFirstErrorByIndex(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	err := forEach(5, func(i int) error {
		switch i {
		case 1:
			return first
		case 3:
			return second
		}
		return nil
	})
	if !errors.Is(err, first) {
		t.Errorf("forEach = %v, want %v", err, first)
	}
}

func indexes(n int) []int {
	var out []int
	for i := range n {
		out = append(out, i)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
