package soak

import (
	"time"

	"github.com/galewatch/galewatch/internal/reading"
)

// The soak's readings are a function of (turbine, second), so the sender
// and the replay writer know exactly what they send: turbine i reports
// every other second, at the seconds of its parity (half the fleet each
// second, each turbine once per 2-s slot: received = readings), recorded
// at the whole second.

// Reports says whether turbine i (1-based) reports at Unix second sec.
func Reports(i int, sec int64) bool { return (int64(i)+sec)%2 == 0 }

// Available is what turbine i says at sec: unavailable about one reading
// in 25.
func Available(i int, sec int64) bool { return mix(uint64(i)<<32^uint64(sec))%25 != 0 }

// Reading is turbine i's reading of farm f at sec, without received_at
// (ingest stamps it: the soak is in real time).
func (f *Farm) Reading(i int, sec int64) reading.Reading {
	h := mix(uint64(i)<<32 ^ uint64(sec) ^ 0x5eed)
	return reading.Reading{
		TurbineID:  f.TurbineID(i),
		RecordedAt: time.Unix(sec, 0).UTC(),
		Available:  Available(i, sec),
		PowerKW:    float32(h%3000) / 2,
		WindMS:     float32(h>>32%250) / 10,
	}
}

// ReplayStopped is how many of the replayed farm's turbines (the first
// ones) sent nothing during the backlog, as 4 of Ardnave's 300 were
// stopped on the Ardnave Saturday (simulate's ardnave-saturday).
const ReplayStopped = 4

// ReplaySends says whether the replayed farm's turbine i has a reading at
// sec in the backlog: not the stopped ones, and turbines 5 to 24 were
// silent for 20 minutes from 4 hours before t0.
func ReplaySends(i int, sec int64, t0 time.Time) bool {
	if i <= ReplayStopped || !Reports(i, sec) {
		return false
	}
	if i <= 24 {
		from := t0.Add(-4 * time.Hour).Unix()
		if sec >= from && sec < from+20*60 {
			return false
		}
	}
	return true
}

// mix is splitmix64's finaliser: a well spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
