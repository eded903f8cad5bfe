package inventory

import "math/bits"

// bitmap is a set of positions in a slice's nodes.
type bitmap []uint64

func newBitmap(n int) bitmap { return make(bitmap, (n+63)/64) }

func (b bitmap) set(i int32) { b[i/64] |= 1 << (i % 64) }

// each calls fn with every position in the set, ascending.
func (b bitmap) each(fn func(i int32)) {
	for w, word := range b {
		for ; word != 0; word &= word - 1 {
			fn(int32(w*64 + bits.TrailingZeros64(word)))
		}
	}
}

func (b bitmap) count() int {
	n := 0
	for _, word := range b {
		n += bits.OnesCount64(word)
	}
	return n
}
