package shards

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Each runs every write once, never more than Writers at once, and hands back each
// write's error at its index.
func TestEachRunsEveryWriteBoundedAndKeepsErrorsInPlace(t *testing.T) {
	for _, n := range []int{0, 1, Writers, 3*Writers + 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var mu sync.Mutex
			ran := make([]int, n)
			inFlight, most := 0, 0
			errs := Each(n, func(i int) error {
				mu.Lock()
				ran[i]++
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				inFlight--
				mu.Unlock()
				if i%3 == 0 {
					return fmt.Errorf("write %d", i)
				}
				return nil
			})
			if len(errs) != n {
				t.Fatalf("%d errors for %d writes", len(errs), n)
			}
			for i := range n {
				if ran[i] != 1 {
					t.Errorf("write %d ran %d times", i, ran[i])
				}
				want := ""
				if i%3 == 0 {
					want = fmt.Sprintf("write %d", i)
				}
				if got := fmt.Sprint(errs[i]); (errs[i] == nil) != (want == "") || (want != "" && got != want) {
					t.Errorf("error %d = %v, want %q", i, errs[i], want)
				}
			}
			if most > Writers {
				t.Errorf("%d writes ran at once, more than %d", most, Writers)
			}
		})
	}
}
