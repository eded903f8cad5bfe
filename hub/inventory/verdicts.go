package inventory

import (
	"crypto/sha256"
	"sync"
)

// maxVerdictsPerSlice bounds what one slice remembers: templates beyond it, however many
// users create, cost a recheck, never memory.
const maxVerdictsPerSlice = 32

// verdicts remembers, per template fingerprint, which of one slice's nodes fit. A slice
// index never changes after it is built, and a replaced slice gets a new index, so a
// verdict is exact for as long as its index is read. The hub's controllers ask the same
// templates on every reconcile; a remembered verdict answers in a few words per slice.
type verdicts struct {
	mu   sync.Mutex
	fits map[[sha256.Size]byte]bitmap
}

func (v *verdicts) get(key [sha256.Size]byte) (bitmap, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b, ok := v.fits[key]
	return b, ok
}

func (v *verdicts) put(key [sha256.Size]byte, b bitmap) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.fits == nil || len(v.fits) >= maxVerdictsPerSlice {
		// Dropping all keeps the bound without bookkeeping; the next queries refill it.
		v.fits = map[[sha256.Size]byte]bitmap{}
	}
	v.fits[key] = b
}
