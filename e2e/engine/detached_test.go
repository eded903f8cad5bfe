package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A daemon started for the tests must not hold the files the test process inherited: under
// `flock lock make test`, dockerd kept the lock, and every later run waited for it forever.
func TestStartDetachedPassesNoInheritedFile(t *testing.T) {
	dir := t.TempDir()
	lock, err := os.Create(filepath.Join(dir, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	// As flock(1) hands its lock to the command it runs: open across exec.
	fd := int(lock.Fd())
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_SETFD, 0); errno != 0 {
		t.Fatal(errno)
	}
	out := filepath.Join(dir, "fds")
	if err := startDetached(filepath.Join(dir, "log"), "sh", "-c", "ls /proc/self/fd > "+out+".tmp && mv "+out+".tmp "+out); err != nil {
		t.Fatal(err)
	}
	var listed []byte
	deadline := time.Now().Add(10 * time.Second)
	for listed == nil && time.Now().Before(deadline) {
		listed, _ = os.ReadFile(out)
		time.Sleep(20 * time.Millisecond)
	}
	if listed == nil {
		t.Fatal("the detached command never listed its files")
	}
	for _, f := range strings.Fields(string(listed)) {
		if f == strconv.Itoa(fd) {
			t.Fatalf("the detached command holds descriptor %d, the test's inherited lock (open: %s)", fd, strings.Fields(string(listed)))
		}
	}
}
