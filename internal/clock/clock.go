// Package clock is where the orchestrator's time comes from. In production
// that is the wall clock. Tests that run the real binary as several
// processes give every process one simulated clock instead: an instant in
// a file that the test moves forward (time is data: a test never sleeps
// for a watermark to pass), named by GALEWATCH_TEST_CLOCK_FILE.
package clock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// FileEnv names the clock file of a test. It is for tests only: a process
// that finds it set reads its time from that file, not from the system.
const FileEnv = "GALEWATCH_TEST_CLOCK_FILE"

// File returns a clock that tells the instant written in path (RFC 3339).
// Every call reads the file (a few microseconds; it is called once per
// ingested reading), so a test's Write is seen by the very next call in
// every process; Write renames a whole file into place, so a reader never
// sees half an instant. The file must hold an instant now; if it later
// cannot be read, the clock keeps its last time.
func File(path string) (func() time.Time, error) {
	f := &fileClock{path: path}
	t, err := f.read()
	if err != nil {
		return nil, err
	}
	f.last = t
	return f.Now, nil
}

type fileClock struct {
	path string
	mu   sync.Mutex
	last time.Time
}

// Now is the instant in the file.
func (f *fileClock) Now() time.Time {
	t, err := f.read()
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil {
		f.last = t
	}
	return f.last
}

func (f *fileClock) read() (time.Time, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return time.Time{}, fmt.Errorf("clock file: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}, fmt.Errorf("clock file %s: want an RFC 3339 instant: %w", f.path, err)
	}
	return t, nil
}

// Write sets the clock in path to t, atomically.
func Write(path string, t time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".clock-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(t.UTC().Format(time.RFC3339Nano) + "\n"); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
