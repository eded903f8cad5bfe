package webhook

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	musterv1 "github.com/musterhq/muster/api/v1alpha1"
)

// passedTemplates remembers, for a while, the built-in objects whose dry-run the hub's API
// server passed, so that the same template is not sent again: a FleetCronJob's runs carry
// its template unchanged slot after slot, and at 500 crons on one slot the dry-run of each
// run was most of the time the runs waited for. Only the webhook's own verdicts are kept,
// so nothing can be admitted unchecked that was not checked a moment before; a verdict
// expires after passedFor, so a change to the API server's rules (an upgrade, a policy on
// the hub's namespace) is seen within it. Refusals are not kept: they cost a user a retry,
// not the fleet its throughput.
type passedTemplates struct {
	mu     sync.Mutex
	passed map[[sha256.Size]byte]time.Time
	now    func() time.Time
}

// passedFor is how long a verdict is trusted, and maxPassed how many are kept: a flood
// of distinct templates costs dry-runs, never memory.
const (
	passedFor = 10 * time.Minute
	maxPassed = 4096
)

func newPassedTemplates(now func() time.Time) *passedTemplates {
	return &passedTemplates{passed: map[[sha256.Size]byte]time.Time{}, now: now}
}

// seen says whether the object keyed key passed a dry-run within passedFor.
func (p *passedTemplates) seen(key [sha256.Size]byte) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.passed[key]
	return ok && p.now().Sub(at) < passedFor
}

// pass records that the object keyed key passed its dry-run now.
func (p *passedTemplates) pass(key [sha256.Size]byte) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if len(p.passed) >= maxPassed {
		p.forget(now)
	}
	p.passed[key] = now
}

// forget drops the expired verdicts, and all of them if that does not free half the room
// (so that a full cache is not scanned on every pass): the cache only saves dry-runs, and
// it fills again with the templates in use.
func (p *passedTemplates) forget(now time.Time) {
	for k, at := range p.passed {
		if now.Sub(at) >= passedFor {
			delete(p.passed, k)
		}
	}
	if len(p.passed) > maxPassed/2 {
		clear(p.passed)
	}
}

// dryRunKey is what a dry-run's verdict depends on: the object's kind and content, with
// its name reduced to its shape (its length and where its dots are, which decide whether
// it fits a label value and an Indexed pod's host name; the API server checked the rest
// of it as the user object's own name) and without the owner's UID label, which differs
// for every FleetJob and is valid whatever it holds.
func dryRunKey(obj client.Object) ([sha256.Size]byte, error) {
	copied, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return [sha256.Size]byte{}, nil
	}
	copied.SetName(nameShape(copied.GetName()))
	if labels := copied.GetLabels(); labels != nil {
		delete(labels, musterv1.FleetJobUIDLabel)
		copied.SetLabels(labels)
	}
	raw, err := json.Marshal(copied)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(raw), nil
}

// nameShape keeps a name's length and its dots.
func nameShape(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' {
			return r
		}
		return 'a'
	}, name)
}
