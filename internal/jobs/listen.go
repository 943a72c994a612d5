package jobs

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// insertTopic is the one River notification topic a working client
// listens to: "a job was inserted in queue Q", a wake-up that makes Q's
// producer look for jobs now rather than at its next poll (500 ms). Any
// login may NOTIFY any channel, so River's other topics, river_control
// (pause, resume, cancel) and river_leadership (resign), would let every
// reporting or ingest login steer the pipeline: they are never listened
// to. Queue pauses and job cancellations still reach the producers from
// river_queue and river_job, which only the pipeline's role may write
// (River polls them every minute), and a leader is elected by polling
// river_leader (every 5 s).
const insertTopic = "river_insert"

// wakeOnlyDriver is River's pgx driver whose listener hears insertTopic
// alone.
type wakeOnlyDriver struct{ *riverpgxv5.Driver }

func newDriver(pool *pgxpool.Pool) wakeOnlyDriver { return wakeOnlyDriver{riverpgxv5.New(pool)} }

// GetListener is the driver's listener, deaf to every topic but insertTopic.
func (d wakeOnlyDriver) GetListener(params *riverdriver.GetListenenerParams) riverdriver.Listener {
	return wakeOnlyListener{d.Driver.GetListener(params)}
}

type wakeOnlyListener struct{ riverdriver.Listener }

// Listen runs LISTEN for insertTopic only; River's subscriptions to the
// other topics stay silent.
func (l wakeOnlyListener) Listen(ctx context.Context, topic string) error {
	if topic != insertTopic {
		return nil
	}
	return l.Listener.Listen(ctx, topic)
}

func (l wakeOnlyListener) Unlisten(ctx context.Context, topic string) error {
	if topic != insertTopic {
		return nil
	}
	return l.Listener.Unlisten(ctx, topic)
}

// WaitForNotification passes on insertTopic's notifications only (the
// connection never listens to another; this holds even if it did).
func (l wakeOnlyListener) WaitForNotification(ctx context.Context) (*riverdriver.Notification, error) {
	for {
		n, err := l.Listener.WaitForNotification(ctx)
		if err != nil || n.Topic == insertTopic {
			return n, err
		}
	}
}
