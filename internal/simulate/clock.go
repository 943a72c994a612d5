package simulate

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// offsetKnots is the quantile function of |clock offset| measured on a
// real fleet (per turbine, a day's least received_at − recorded_at, as
// turbine_day.min_lag_ms): median 0.4 s, p95 2.1 s, p99 9.6 s, worst 41 s. The 0.02 s floor
// stands in for NTP-synced machines, which are never exactly right either.
var offsetKnots = []struct {
	p float64
	v float64 // seconds
}{
	{0, 0.02},
	{0.5, 0.4},
	{0.95, 2.1},
	{0.99, 9.6},
	{1, 41},
}

// ClockOffsets gives each turbine a fixed clock offset whose magnitudes
// follow the measured fleet's (offsetKnots). Magnitudes are stratified
// quantiles (one per 1/N of probability, shuffled) rather than independent
// draws, so even a few hundred turbines hit the fleet's median and tail
// instead of wandering around them; signs are a fair coin each. The result depends only on the
// set of ids and the seed, not their order. Offsets are whole milliseconds,
// the resolution turbine controllers stamp with.
func ClockOffsets(ids []string, seed uint64) map[string]time.Duration {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	n := len(sorted)
	u := make([]float64, n)
	for i := range u {
		u[i] = (float64(i) + 0.5) / float64(n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x636c6f636b73))
	rng.Shuffle(n, func(i, j int) { u[i], u[j] = u[j], u[i] })
	out := make(map[string]time.Duration, n)
	for i, id := range sorted {
		d := time.Duration(math.Round(offsetQuantile(u[i])*1000)) * time.Millisecond
		if rng.IntN(2) == 0 {
			d = -d
		}
		out[id] = d
	}
	return out
}

// offsetQuantile interpolates log(seconds) linearly between the knots, which
// keeps the heavy tail heavy where a linear interpolation would flatten it.
func offsetQuantile(u float64) float64 {
	k := offsetKnots
	if u <= k[0].p {
		return k[0].v
	}
	for i := 1; i < len(k); i++ {
		if u <= k[i].p {
			f := (u - k[i-1].p) / (k[i].p - k[i-1].p)
			return math.Exp(math.Log(k[i-1].v) + f*(math.Log(k[i].v)-math.Log(k[i-1].v)))
		}
	}
	return k[len(k)-1].v
}
