package ingest

import "time"

// pacer is MaxRate's clock: the wall clock's, or a test's.
type pacer interface {
	Now() time.Time
	Sleep(time.Duration)
}

type wallPacer struct{}

func (wallPacer) Now() time.Time        { return time.Now() }
func (wallPacer) Sleep(d time.Duration) { time.Sleep(d) }

// paceEvery is how many lines are read between two looks at the pace.
const paceEvery = 256

// paceLine holds reading back so that, from the session's first line, at
// most MaxRate lines a second are read.
func (s *session) paceLine() {
	p := s.in.pace
	if s.paced == 0 {
		s.paceStart = p.Now()
	}
	s.paced++
	if s.paced%paceEvery != 0 {
		return
	}
	due := s.paceStart.Add(time.Duration(float64(s.paced) / s.in.cfg.MaxRate * float64(time.Second)))
	if d := due.Sub(p.Now()); d > 0 {
		p.Sleep(d)
	}
}
