package podcontrol

import "sync/atomic"

// batchSizes splits n writes into slow-start batches of 1, 2, 4, …, the last one holding
// what is left.
func batchSizes(n int) []int {
	var sizes []int
	for size := 1; n > 0; size *= 2 {
		sizes = append(sizes, min(size, n))
		n -= sizes[len(sizes)-1]
	}
	return sizes
}

// slowStart calls fn for 0..n-1, each batch of batchSizes concurrently, and stops after
// the first batch in which a call failed: a write every call would fail the same way
// (a bad template, an exhausted quota) is tried a few times, not n times. It returns how
// many calls succeeded, those of the failed batch included, and the failed batch's first
// error in index order.
func slowStart(n int, fn func(i int) error) (int, error) {
	var succeeded atomic.Int32
	start := 0
	for _, size := range batchSizes(n) {
		err := forEach(size, func(k int) error {
			if err := fn(start + k); err != nil {
				return err
			}
			succeeded.Add(1)
			return nil
		})
		start += size
		if err != nil {
			return int(succeeded.Load()), err
		}
	}
	return int(succeeded.Load()), nil
}
