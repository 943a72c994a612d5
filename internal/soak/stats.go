package soak

import (
	"math"
	"slices"
	"time"
)

// Dist summarises a set of durations: nearest-rank quantiles (each an
// observed value), the largest and the mean.
type Dist struct {
	N    int     `json:"n"`
	P50  float64 `json:"p50_s"`
	P99  float64 `json:"p99_s"`
	Max  float64 `json:"max_s"`
	Mean float64 `json:"mean_s"`
}

// Summarize computes the Dist of ds (seconds); an empty set is all zeros.
func Summarize(ds []time.Duration) Dist {
	if len(ds) == 0 {
		return Dist{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return Dist{
		N:    len(s),
		P50:  Rank(s, 0.50).Seconds(),
		P99:  Rank(s, 0.99).Seconds(),
		Max:  s[len(s)-1].Seconds(),
		Mean: (sum / time.Duration(len(s))).Seconds(),
	}
}

// Rank is the nearest-rank q-quantile of sorted: the smallest value with at
// least q of the set at or below it.
func Rank(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
