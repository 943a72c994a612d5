package soak

import (
	"fmt"
	"io"
	"time"

	"github.com/galewatch/galewatch/internal/localday"
	"github.com/galewatch/galewatch/internal/reading"
)

// Count is what was sent of a window (or a turbine's window): slots with
// a reading, and those whose reading said available.
type Count struct {
	Received  int64 `json:"received"`
	Available int64 `json:"available"`
}

// TurbineWindow names one turbine's window.
type TurbineWindow struct {
	TurbineID string
	Start     time.Time
}

// DayCount is one turbine's farm-local day as the backlog holds it.
type DayCount struct {
	Expected int64
	Count
}

// TurbineDay names one turbine's farm-local day.
type TurbineDay struct {
	TurbineID string
	Day       localday.Date
}

// ReplayFile is what the replay file holds, counted as it was written.
type ReplayFile struct {
	// FarmID is the farm replayed.
	FarmID string
	Lines  int64
	// From and To bound the backlog: [From, To) = [T0 - Backlog, T0).
	From, To time.Time
	// Windows: per window start, over the whole farm.
	Windows map[time.Time]*Count
	// TurbineWindows: per turbine and window.
	TurbineWindows map[TurbineWindow]*Count
	// ClosedDays: per turbine, the farm-local days that ended before T0
	// (their turbine_day rows are checked), with the slots expected of
	// the turbine's service time in them (from its commissioning).
	ClosedDays map[TurbineDay]*DayCount
}

// WriteReplay writes the replayed farm's backlog, [T0 - Backlog, T0), to w
// as CSV in the order the link would deliver it (time, then turbine),
// without received_at (stamped when it arrives: the replay is late), and
// returns what it holds.
func (fl *Fleet) WriteReplay(w io.Writer) (*ReplayFile, error) {
	return fl.WriteReplayOf(fl.Replay(), w)
}

// WriteReplayOf is WriteReplay for farm f (the replayed farm, or Alone).
func (fl *Fleet) WriteReplayOf(f *Farm, w io.Writer) (*ReplayFile, error) {
	rf := &ReplayFile{
		FarmID: f.ID, From: fl.T0.Add(-fl.Config.Backlog), To: fl.T0,
		Windows: map[time.Time]*Count{}, TurbineWindows: map[TurbineWindow]*Count{}, ClosedDays: map[TurbineDay]*DayCount{},
	}
	if !rf.From.Equal(f.Commissioned) {
		return nil, fmt.Errorf("replay: the backlog starts at %s, the farm's commissioning at %s", rf.From, f.Commissioned)
	}
	enc := reading.NewEncoder(reading.CSV, w)
	ids := make([]string, f.Turbines()+1)
	for i := 1; i <= f.Turbines(); i++ {
		ids[i] = f.TurbineID(i)
	}
	for sec := rf.From.Unix(); sec < rf.To.Unix(); sec++ {
		at := time.Unix(sec, 0).UTC()
		ws := f.WindowStart(at)
		win := rf.Windows[ws]
		if win == nil {
			win = &Count{}
			rf.Windows[ws] = win
		}
		for i := 1; i <= f.Turbines(); i++ {
			if !ReplaySends(i, sec, fl.T0) {
				continue
			}
			r := f.Reading(i, sec)
			if err := enc.Encode(&r); err != nil {
				return nil, err
			}
			rf.Lines++
			tw := TurbineWindow{TurbineID: ids[i], Start: ws}
			c := rf.TurbineWindows[tw]
			if c == nil {
				c = &Count{}
				rf.TurbineWindows[tw] = c
			}
			c.Received++
			win.Received++
			if r.Available {
				c.Available++
				win.Available++
			}
		}
	}
	if err := enc.Flush(); err != nil {
		return nil, err
	}
	// The farm-local days that ended by T0: each turbine's slots from its
	// commissioning to the day's end, and what the backlog holds of them.
	for d := localday.Of(rf.From, f.Loc); ; d = d.AddDays(1) {
		start, end := localday.Bounds(d, f.Loc)
		if end.After(rf.To) {
			break
		}
		origin := start
		if f.Commissioned.After(origin) {
			origin = f.Commissioned
		}
		if !end.After(origin) {
			continue
		}
		for i := 1; i <= f.Turbines(); i++ {
			dc := &DayCount{Expected: int64(end.Sub(origin) / Cadence)}
			rf.ClosedDays[TurbineDay{TurbineID: ids[i], Day: d}] = dc
			for sec := origin.Unix(); sec < end.Unix(); sec++ {
				if ReplaySends(i, sec, fl.T0) {
					dc.Received++
					if Available(i, sec) {
						dc.Available++
					}
				}
			}
		}
	}
	return rf, nil
}
