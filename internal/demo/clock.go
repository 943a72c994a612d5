package demo

import (
	"sync"
	"time"
)

// Clock is the demo's time: what it stamps and compares (Now) and how it
// waits (After). The pipeline beside it must run on the same Now, so a
// test can play the story faster than the wall clock (ScaledClock).
type Clock interface {
	Now() time.Time
	// After fires once d has passed on this clock.
	After(d time.Duration) <-chan time.Time
}

// WallClock is the real clock (`serve --demo`).
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// After is time.After.
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ScaledClock runs Speed times faster than the wall clock from its start,
// until it is frozen. Tests give it to the demo and to the whole pipeline
// (ingest, fast path, drain, rollups), so every rule that reads the clock
// (the mark rule, the watermark, the drain's settling) sees the same time.
type ScaledClock struct {
	mu     sync.Mutex
	start  time.Time // the clock's reading at wall (or where it froze)
	wall   time.Time
	speed  float64
	frozen bool
}

// NewScaledClock starts a clock reading start now, running speed times
// faster than the wall clock.
func NewScaledClock(start time.Time, speed float64) *ScaledClock {
	return &ScaledClock{start: start, wall: time.Now(), speed: speed}
}

// Now is the clock's reading.
func (c *ScaledClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now()
}

func (c *ScaledClock) now() time.Time {
	if c.frozen {
		return c.start
	}
	return c.start.Add(time.Duration(float64(time.Since(c.wall)) * c.speed))
}

// After fires once d has passed on this clock; never, once it is frozen.
func (c *ScaledClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		return nil
	}
	return time.After(time.Duration(float64(d) / c.speed))
}

// Freeze stops the clock and returns where it stopped: from then on Now
// returns that instant, so a test can count what is due by it exactly.
func (c *ScaledClock) Freeze() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.frozen {
		c.start, c.frozen = c.now(), true
	}
	return c.start
}

// SetSpeed changes the speed from now on (the reading does not jump).
func (c *ScaledClock) SetSpeed(speed float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.frozen {
		c.start, c.wall = c.now(), time.Now()
	}
	c.speed = speed
}

// Wall is the wall-clock duration that d on this clock takes.
func (c *ScaledClock) Wall(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.speed)
}
