package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/galewatch/galewatch/internal/demo"
	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/ingest"
	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/server"
)

// demoOptions are serve's --demo flags (`make run`).
type demoOptions struct {
	on       bool
	fleet    string
	saturday string
	cfg      demo.Config
}

func addDemoFlags(cmd *cobra.Command) *demoOptions {
	o := &demoOptions{cfg: demo.DefaultConfig()}
	f := cmd.Flags()
	f.BoolVar(&o.on, "demo", false, "tell the story: a live simulated feed of the fleet, and the Ardnave Saturday on the clock (make run)")
	f.StringVar(&o.fleet, "demo-fleet", "fleet/demo.yaml", "with --demo: the fleet file the feed simulates (the one applied)")
	f.StringVar(&o.saturday, "demo-saturday", "", "with --demo: the farm-local day (YYYY-MM-DD) the story is placed on (default: the last Saturday before yesterday)")
	f.DurationVar(&o.cfg.DayAfter, "demo-day-after", o.cfg.DayAfter, "with --demo: when the story's day is delivered, after start")
	f.DurationVar(&o.cfg.ReplayAfter, "demo-replay-after", o.cfg.ReplayAfter, "with --demo: when the replay is delivered, after start (not before the day is rolled up)")
	f.DurationVar(&o.cfg.Report, "demo-report", o.cfg.Report, "with --demo: how often the live feed says what it did (0: never)")
	f.Uint64Var(&o.cfg.Seed, "demo-seed", o.cfg.Seed, "with --demo: random seed of the feed and the story")
	return o
}

// check validates the flags before anything is started.
func (o *demoOptions) check() error {
	if !o.on {
		return nil
	}
	if o.saturday != "" {
		d, err := time.Parse(time.DateOnly, o.saturday)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--demo-saturday: want a date YYYY-MM-DD, got %q", o.saturday)}
		}
		o.cfg.Saturday = localday.DateOf(d)
	}
	if o.cfg.DayAfter < 0 || o.cfg.ReplayAfter < o.cfg.DayAfter {
		return &exitError{code: 2, err: fmt.Errorf("--demo-replay-after (%s) must not be before --demo-day-after (%s), and neither negative", o.cfg.ReplayAfter, o.cfg.DayAfter)}
	}
	plan, err := fleet.ReadFile(o.fleet)
	if err != nil {
		return fmt.Errorf("--demo-fleet: %w", err)
	}
	o.cfg.Plan = plan
	return nil
}

// newDemo prepares the demo on serve's pipeline (nil without --demo).
func (m *Main) newDemo(ctx context.Context, o *demoOptions, in *ingest.Ingestor) (*storyteller, error) {
	if !o.on {
		return nil, nil
	}
	cfg := o.cfg
	cfg.Clock = demo.WallClock{}
	cfg.Out = os.Stdout
	control, err := m.Control(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.Registry, err = m.Registry(ctx); err != nil {
		return nil, err
	}
	d, err := demo.New(cfg, control, in)
	if err != nil {
		return nil, err
	}
	return &storyteller{demo: d, done: make(chan struct{})}, nil
}

// note is what the status page says of the demo (nil without one).
func (s *storyteller) note() *server.Demo {
	if s == nil {
		return nil
	}
	n := &server.Demo{FeedFrom: s.demo.FeedFrom()}
	if st := s.demo.Story(); st != nil {
		n.Farm, n.Day = st.Farm, st.Day
	}
	return n
}

// storyteller runs the demo once serve listens; a nil one does nothing.
type storyteller struct {
	demo    *demo.Demo
	done    chan struct{}
	started bool
}

// tell starts the demo, which says where to look.
func (s *storyteller) tell(ctx context.Context, addr net.Addr) {
	if s == nil {
		return
	}
	s.demo.SetURL("http://" + addr.String())
	s.started = true
	go func() {
		defer close(s.done)
		if err := s.demo.Run(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "orchestrator: demo:", err)
		}
	}()
}

// wait returns once a started demo has stopped, when ctx (which stops it)
// has ended; a server that failed on its own does not wait for it.
func (s *storyteller) wait(ctx context.Context) {
	if s != nil && s.started && ctx.Err() != nil {
		<-s.done
	}
}
