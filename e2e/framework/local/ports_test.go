package local

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

func TestPortPoolNeverHandsOutAPortTwiceNorOneInUse(t *testing.T) {
	// Something listens on the port the pool would hand out first: it is skipped.
	var busy net.Listener
	for port := 32000; busy == nil && port > 31000; port-- {
		busy, _ = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	}
	if busy == nil {
		t.Fatal("no port between 31000 and 32000 could be bound")
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	pool := &portPool{next: busyPort}

	var mu sync.Mutex
	seen := map[int]bool{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ports, err := pool.take(6)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range ports {
				if seen[p] {
					t.Errorf("port %d handed out twice", p)
				}
				if p == busyPort {
					t.Errorf("port %d is in use, yet handed out", p)
				}
				if p >= 32768 || p <= lowestPort {
					t.Errorf("port %d outside kwokctl's range", p)
				}
				seen[p] = true
			}
		}()
	}
	wg.Wait()
	if len(seen) != 24 {
		t.Errorf("%d distinct ports for 4 clusters of 6, want 24", len(seen))
	}
}
