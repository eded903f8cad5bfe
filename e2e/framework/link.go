package framework

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// Link is the network between one agent and the hub, as a TCP relay the test can cut:
// the agent is joined with the relay's address as the hub's, so that cutting it is a
// partition of that agent alone. The agent keeps running and reaches its member; the
// hub, the test and the other agents reach everything as before.
type Link struct {
	listener net.Listener
	target   string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// NewLink relays connections on a free local port to target (host:port).
func NewLink(target string) (*Link, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the link to %s: %w", target, err)
	}
	link := &Link{listener: l, target: target, conns: map[net.Conn]struct{}{}}
	go link.serve()
	return link, nil
}

// Addr is the address the agent dials for the hub.
func (l *Link) Addr() string { return l.listener.Addr().String() }

// Cut partitions the agent from the hub: open connections are closed and new ones are
// closed as soon as they are accepted, as a firewall that rejects them would.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for c := range l.conns {
		_ = c.Close()
	}
}

// Heal lets connections through again.
func (l *Link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
}

// Close stops relaying and closes every connection.
func (l *Link) Close() {
	_ = l.listener.Close()
	l.Cut()
}

func (l *Link) serve() {
	for {
		in, err := l.listener.Accept()
		if err != nil {
			// Closed, or broken: either way the link relays no more.
			return
		}
		go l.relay(in)
	}
}

// relay copies one connection both ways until either side closes it or the link is cut.
func (l *Link) relay(in net.Conn) {
	if !l.track(in) {
		_ = in.Close()
		return
	}
	defer l.untrack(in)
	out, err := net.Dial("tcp", l.target)
	if err != nil {
		_ = in.Close()
		return
	}
	if !l.track(out) {
		_ = in.Close()
		_ = out.Close()
		return
	}
	defer l.untrack(out)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
}

// track records c unless the link is cut.
func (l *Link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Link) untrack(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
}
