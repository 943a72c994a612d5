// Command sweep cleans up after a test run.
//
// With -discard and GALEWATCH_HOME set (make test's own test home,
// .galewatch/test), it stops every cluster in that home and removes the
// folder: a whole run's databases go at once, none dropped one by one
// (Postgres 15 makes each DROP DATABASE wait for a checkpoint: 666 of them
// took 3 minutes after a make test). With DATABASE_URL, or without
// -discard, it drops the databases finished tests marked done on the test
// server (DATABASE_URL, else the home's embedded cluster when it runs).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

func main() {
	discard := flag.Bool("discard", false, "stop the clusters of $GALEWATCH_HOME and remove it (make test's own test home; refused when GALEWATCH_HOME is unset)")
	flag.Parse()
	ctx := context.Background()
	if dsn := os.Getenv("DATABASE_URL"); dsn != "" {
		maint, err := pgserver.WithDatabase(dsn, "postgres")
		if err != nil {
			fail(err)
		}
		sweep(ctx, maint)
		return
	}
	home := os.Getenv("GALEWATCH_HOME")
	if *discard {
		if home == "" {
			fail(errors.New("-discard needs GALEWATCH_HOME: it never removes the default .galewatch"))
		}
		if err := discardHome(ctx, home); err != nil {
			fail(err)
		}
		return
	}
	if home == "" {
		home = ".galewatch"
	}
	s := pgserver.New(home)
	st, err := s.Status(ctx)
	if err != nil || !st.Running {
		return // nothing to sweep on a stopped cluster: the next test run does it
	}
	sweep(ctx, s.URL("postgres"))
}

func sweep(ctx context.Context, maint string) {
	n, err := testdb.Sweep(ctx, maint)
	if err != nil {
		fail(err)
	}
	if n > 0 {
		fmt.Printf("testdb: dropped %d finished test database(s)\n", n)
	}
}

// discardHome stops the home's default cluster and its named ones, then
// removes it, unless GALEWATCH_KEEP_TEST_DBS asks to look at them (then
// they are stopped cleanly).
func discardHome(ctx context.Context, home string) error {
	abs, err := filepath.Abs(home)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return removeInBackground(abs) // what an earlier removal left
	} else if err != nil {
		return err
	}
	keep := os.Getenv("GALEWATCH_KEEP_TEST_DBS") != ""
	names, err := pgserver.ServerNames(home)
	if err != nil {
		return err
	}
	servers := []*pgserver.Server{pgserver.New(home)}
	for _, name := range names {
		servers = append(servers, pgserver.Named(home, name))
	}
	var errs []error
	for _, s := range servers {
		if keep {
			errs = append(errs, s.Down(ctx))
		} else {
			errs = append(errs, s.Abandon(ctx))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if keep {
		fmt.Printf("testdb: kept %s (GALEWATCH_KEEP_TEST_DBS); its clusters are stopped\n", home)
		return nil
	}
	// Removing a run's ~270,000 files took 53 s: the folder is renamed
	// out of the way and removed by a process of its own, which the make
	// target does not wait for (its output goes nowhere, so a pipe reading
	// make's output does not wait either). A removal cut short is finished
	// by the next run.
	if err := os.Rename(abs, fmt.Sprintf("%s.discarded-%d", abs, time.Now().UnixNano())); err != nil {
		return err
	}
	fmt.Printf("testdb: removing the test home %s in the background\n", abs)
	return removeInBackground(abs)
}

// removeInBackground starts rm -rf of every home.discarded-* folder and
// does not wait for it.
func removeInBackground(home string) error {
	left, _ := filepath.Glob(home + ".discarded-*")
	if len(left) == 0 {
		return nil
	}
	rm := exec.Command("rm", append([]string{"-rf", "--"}, left...)...)
	rm.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := rm.Start(); err != nil {
		return err
	}
	return rm.Process.Release()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testdb sweep:", err)
	os.Exit(1)
}
