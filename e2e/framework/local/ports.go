package local

import (
	"fmt"
	"net"
	"strconv"
	"sync"
)

// portPool hands out the host ports of a fleet's control planes. Left to itself, kwokctl
// counts down from 32767 and keeps the first port nothing listens on yet; its binary
// runtime records none of them where another kwokctl would look, so two clusters created
// at once pick the same ports before either has bound them. The provider picks them
// instead, under one lock, from the same range: below the kernel's ephemeral ports
// (32768 and up), where envtest's API servers and framework.FreePort get theirs.
type portPool struct {
	mu   sync.Mutex
	next int
}

// lowestPort ends the search; kwokctl stops at the same place.
const lowestPort = 10000

func newPortPool() *portPool { return &portPool{next: 32767} }

// take returns n ports that nothing listens on and that this pool has not handed out.
func (p *portPool) take(n int) ([]int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ports := make([]int, 0, n)
	for len(ports) < n {
		if p.next <= lowestPort {
			return nil, fmt.Errorf("no unused port left above %d", lowestPort)
		}
		port := p.next
		p.next--
		if unused(port) {
			ports = append(ports, port)
		}
	}
	return ports, nil
}

// unused reports whether port can be bound, on the loopback address and on every address,
// as kwokctl checks.
func unused(port int) bool {
	for _, host := range []string{"127.0.0.1", ""} {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}
