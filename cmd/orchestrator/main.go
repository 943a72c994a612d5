// Command orchestrator runs the Galewatch availability pipeline: the embedded
// database, migrations, the fleet registry, ingest, rollup workers and the
// HTTP server. Configuration is by environment (docs/operator.md, "Configuration") and flags.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/clock"
	"github.com/galewatch/galewatch/internal/fleet"
)

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain()
	err := m.Command().ExecuteContext(ctx)
	m.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "orchestrator:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode maps an error to the process exit status: 2 for bad input (a
// fleet file that does not validate), a command's own code, else 1.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case fleet.IsValidation(err):
		return 2
	default:
		return 1
	}
}

// Command builds the command tree.
func (m *Main) Command() *cobra.Command {
	root := &cobra.Command{
		Use:           "orchestrator",
		Short:         "Galewatch availability pipeline",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := checkRetiredEnv(); err != nil {
				return err
			}
			return m.useClockFile()
		},
	}
	// A mistyped flag is the caller's mistake, as every refused input is:
	// exit 2, so a script tells it from a failure.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: 2, err: err} })
	root.PersistentFlags().StringVar(&m.Config.Home, "home", m.Config.Home, "embedded Postgres folder when DATABASE_URL is unset ($GALEWATCH_HOME)")
	root.AddCommand(m.dbCommand(), m.migrateCommand(), m.fleetCommand(), m.serveCommand(), m.ingestCommand(), m.simulateCommand(), m.workCommand(), m.rollupCommand(), m.latenessCommand(), m.experimentCommand(), m.reportCommand(), m.verifyCommand(), m.dayCommand(), m.eventCommand())
	return root
}

// useClockFile takes the process's time from a test's clock file when
// GALEWATCH_TEST_CLOCK_FILE is set (tests that run several real processes
// on one simulated clock), and says so on stderr.
func (m *Main) useClockFile() error {
	path := os.Getenv(clock.FileEnv)
	if path == "" {
		return nil
	}
	now, err := clock.File(path)
	if err != nil {
		return fmt.Errorf("%s: %w", clock.FileEnv, err)
	}
	m.Now = now
	fmt.Fprintf(os.Stderr, "orchestrator: test clock: the time is read from %s (%s), not from the system\n", path, clock.FileEnv)
	return nil
}
