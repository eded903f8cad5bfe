package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/musterhq/muster/e2e/framework"
)

// sampler reads the resident memory of the hub and of its control plane's kube-apiserver
// and etcd every second, and keeps each one's peak since the last reset.
type sampler struct {
	hub *framework.Process
	// dir is the fleet's directory, which the control plane's command lines mention.
	dir string

	mu   sync.Mutex
	last map[string]int64
	peak map[string]int64
}

// processes are the processes sampled, by the name the `scale` lines give them: the
// hub, its control plane's, and this one, which simulates the members.
var processes = []string{"hub", "kube-apiserver", "etcd", "simulator"}

func newSampler(ctx context.Context, hub *framework.Process, dir string) *sampler {
	s := &sampler{hub: hub, dir: dir, last: map[string]int64{}, peak: map[string]int64{}}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	now := map[string]int64{}
	if rss, err := s.hub.RSS(); err == nil {
		now["hub"] = rss
	}
	if rss, err := framework.RSSOf(os.Getpid()); err == nil {
		now["simulator"] = rss
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		for _, pid := range framework.FindProcesses(name, s.dir) {
			if rss, err := framework.RSSOf(pid); err == nil {
				now[name] += rss
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, rss := range now {
		s.last[name] = rss
		s.peak[name] = max(s.peak[name], rss)
	}
}

// reset starts new peaks from the current figures.
func (s *sampler) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.peak {
		s.peak[name] = s.last[name]
	}
}

// figures is "hub-rss=… hub-rss-peak=… kube-apiserver-rss=…" for a `scale` line.
func (s *sampler) figures() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := ""
	for _, name := range processes {
		out += fmt.Sprintf(" %s-rss=%s %s-rss-peak=%s", name, mib(s.last[name]), name, mib(s.peak[name]))
	}
	return out
}

// hubRSS is the hub's latest resident memory in bytes.
func (s *sampler) hubRSS() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last["hub"]
}

func mib(b int64) string { return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20)) }
