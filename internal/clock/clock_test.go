package clock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/galewatch/galewatch/internal/clock"
)

// TestFileClock: the clock tells what the file says, a Write is seen by
// the very next call (twice within the same millisecond too), and a file
// that does not hold an instant is refused naming the file.
func TestFileClock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "clock")
	first := time.Date(2026, 8, 1, 10, 0, 45, 0, time.UTC)
	if err := clock.Write(path, first); err != nil {
		t.Fatal(err)
	}
	now, err := clock.File(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := now(); !got.Equal(first) {
		t.Fatalf("clock says %s, want %s", got, first)
	}
	for i := 1; i <= 3; i++ {
		next := first.Add(time.Duration(i) * 20 * time.Minute)
		if err := clock.Write(path, next); err != nil {
			t.Fatal(err)
		}
		if got := now(); !got.Equal(next) {
			t.Fatalf("after write %d the clock says %s, want %s", i, got, next)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("ten o'clock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := clock.File(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a file without an instant: %v, want an error naming %s", err, bad)
	}
	if _, err := clock.File(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing clock file was accepted")
	}
}
