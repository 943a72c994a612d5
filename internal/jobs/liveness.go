package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Liveness says, for as long as this process runs, that its River client is
// alive, and gives back the jobs of clients that are not.
//
// River marks a job "running" when a worker takes it and has no heartbeat:
// if the process dies (kill -9, a crash, a lost host) the job stays
// "running" until River's rescuer takes it back, after the job kind's
// timeout (15 minutes for a rollup) at best. Meanwhile a unique periodic job
// (drain_dirty, publish_windows: one may wait or run at a time) cannot be
// inserted again, so the drain and the fast path stop for every farm.
//
// So the process holds a session advisory lock named after its client id
// (worker_liveness_key, on the control database) on a connection of its
// own; the lock ends with the session, that is with the process (the
// control database sees a killed process's socket close at once; TCP
// keepalives on the session find a vanished host within about a minute).
// Every Every, it gives back each job running for at least Grace whose last
// worker holds no lock (river_job_rescue_abandoned): available again at
// once, or discarded when out of attempts. A job given back while its
// worker was in fact alive (it lost its liveness session for longer than
// Grace) runs twice, which every job here tolerates: recomputes are
// serialised and overwrite, the drain is one per shard at a time, a fast
// row is inserted once.
//
// A process that lost its liveness session (the control database
// restarted) takes the lock again as soon as it can, and gives nothing
// back until it has held it for Grace, so that the other processes have
// had the time to take theirs again too.
type Liveness struct {
	Control  *pgxpool.Pool
	ClientID string
	// Every is how often the lock is checked and abandoned jobs are
	// looked for (default 5 s); Grace how long a job must have run, and
	// this process have held its lock, before it gives a job back
	// (default 15 s).
	Every, Grace time.Duration
	Now          func() time.Time
	Logger       *slog.Logger

	mu        sync.Mutex
	conn      *pgx.Conn
	heldSince time.Time
	cancel    context.CancelFunc
	done      chan struct{}
}

// Start takes the liveness lock (within 10 s) and keeps it, and the
// rescue, going in the background until Stop.
func (l *Liveness) Start(ctx context.Context) error {
	if err := l.hold(ctx); err != nil {
		return err
	}
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.done = make(chan struct{})
	go l.run(ctx)
	return nil
}

// Stop ends the background work and releases the lock (closes its session).
func (l *Liveness) Stop() {
	if l.cancel == nil {
		return
	}
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = l.conn.Close(ctx)
		l.conn = nil
	}
}

func (l *Liveness) every() time.Duration { return cmp.Or(l.Every, 5*time.Second) }
func (l *Liveness) grace() time.Duration { return cmp.Or(l.Grace, 15*time.Second) }
func (l *Liveness) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Liveness) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}

func (l *Liveness) run(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.every())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := l.hold(ctx); err != nil {
			l.logger().Warn("worker liveness: cannot hold the lock on the control database; giving nothing back until it is held again", "client", l.ClientID, "err", err)
			continue
		}
		rescued, err := l.Rescue(ctx)
		if err != nil {
			l.logger().Warn("worker liveness: looking for jobs of gone workers", "err", err)
		}
		for _, r := range rescued {
			l.logger().Warn("worker liveness: gave back a job whose worker is gone", "job", r)
		}
	}
}

// hold makes sure the liveness session is open and holds the lock: it
// checks the open one, or opens a new one and takes the lock.
func (l *Liveness) hold(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		alive, err := controldb.New(l.conn).WorkerAlive(ctx, l.ClientID)
		if err == nil && alive {
			return nil
		}
		_ = l.conn.Close(ctx)
		l.conn, l.heldSince = nil, time.Time{}
		if err == nil {
			err = errors.New("the lock is no longer held")
		}
		return err
	}
	cfg := l.Control.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "galewatch liveness " + l.ClientID
	// The server notices a vanished host (no FIN, no RST) within about a
	// minute instead of the kernel's default two hours.
	cfg.RuntimeParams["tcp_keepalives_idle"] = "30"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "10"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("worker liveness: connect: %w", err)
	}
	locked, err := controldb.New(conn).WorkerLivenessLock(ctx, l.ClientID)
	if err != nil || !locked {
		_ = conn.Close(ctx)
		if err == nil {
			err = fmt.Errorf("another session holds the liveness lock of River client %q", l.ClientID)
		}
		return fmt.Errorf("worker liveness: %w", err)
	}
	l.conn, l.heldSince = conn, l.now()
	return nil
}

// Alive says whether the process of River client id holds its liveness lock.
func (l *Liveness) Alive(ctx context.Context, clientID string) (bool, error) {
	return controldb.New(l.Control).WorkerAlive(ctx, clientID)
}

// Rescue gives back the jobs of gone workers, unless this process has held
// its own lock for less than Grace. It returns one line per job.
func (l *Liveness) Rescue(ctx context.Context) ([]string, error) {
	l.mu.Lock()
	since := l.heldSince
	l.mu.Unlock()
	now := l.now()
	if since.IsZero() || now.Sub(since) < l.grace() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return controldb.New(l.Control).RiverJobRescueAbandoned(ctx, controldb.RiverJobRescueAbandonedParams{
		Now: now, RunningForS: int32(l.grace() / time.Second),
	})
}

// Start starts a River client together with its liveness (taken first, so
// that no job of the client is ever running without it) and returns the
// function that stops both (River first, with up to 30 s for the jobs in
// hand to finish). Every process that works jobs goes through it.
func Start(ctx context.Context, control *pgxpool.Pool, client *river.Client[pgx.Tx], logger *slog.Logger) (stop func(), err error) {
	live := &Liveness{Control: control, ClientID: client.ID(), Logger: logger}
	if err := live.Start(ctx); err != nil {
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		live.Stop()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = client.Stop(sctx)
			live.Stop()
		})
	}, nil
}
