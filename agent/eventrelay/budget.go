package eventrelay

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Budget is how many member events one Work may receive: Burst at once, then one per
// Every.
type Budget struct {
	Burst int
	Every time.Duration
}

// DefaultBudget lets a Work receive ten events at once and then one a minute, about what
// a user reads in `describe` and far below what the hub's API server notices.
var DefaultBudget = Budget{Burst: 10, Every: time.Minute}

func (b Budget) orDefault() Budget {
	if b.Burst <= 0 || b.Every <= 0 {
		return DefaultBudget
	}
	return b
}

// maxIdleBudgets is how many Works' budgets are kept before the full (idle) ones are
// dropped: a dropped budget starts full again, which is what it was.
const maxIdleBudgets = 1024

// budgets holds one token bucket per Work.
type budgets struct {
	budget Budget
	mu     sync.Mutex
	byWork map[string]*rate.Limiter
}

func newBudgets(b Budget) *budgets {
	return &budgets{budget: b, byWork: map[string]*rate.Limiter{}}
}

// take spends one of work's events, or reports that none is left.
func (b *budgets) take(work string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	lim, ok := b.byWork[work]
	if !ok {
		if len(b.byWork) >= maxIdleBudgets {
			b.dropFull()
		}
		lim = rate.NewLimiter(rate.Every(b.budget.Every), b.budget.Burst)
		b.byWork[work] = lim
	}
	return lim.Allow()
}

// dropFull forgets the budgets that refilled completely; the map then holds only Works
// that received events recently, at most as many as relay within one refill.
func (b *budgets) dropFull() {
	for work, lim := range b.byWork {
		if lim.Tokens() >= float64(b.budget.Burst) {
			delete(b.byWork, work)
		}
	}
}
