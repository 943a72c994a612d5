package fleet

import (
	"fmt"
	"time"
)

// CheckRollupRange says whether farm may recompute the farm-local days
// [from, to] at now under rules: no day older than its max_age (ingest
// refuses readings older, so an older day is a slip, not a recompute:
// 1970 to 9999 would queue 2.9 million jobs per farm and shard) and no
// day after today. Both ends allow a day for the farm's zone, which may
// be a day ahead of or behind UTC.
func CheckRollupRange(farm string, rules Rules, from, to, now time.Time) error {
	maxAgeDays := int64(rules.MaxAge / (24 * time.Hour))
	today := now.UTC().Truncate(24 * time.Hour)
	earliest := today.AddDate(0, 0, -int(maxAgeDays)-1)
	latest := today.AddDate(0, 0, 1)
	switch {
	case from.Before(earliest):
		return fmt.Errorf("--from %s is older than farm %s's max_age (%dd): the earliest day it may recompute now is %s (no reading older is accepted)",
			from.Format(time.DateOnly), farm, maxAgeDays, earliest.Format(time.DateOnly))
	case to.After(latest):
		return fmt.Errorf("--to %s is after today (%s UTC): farm %s has no day there to recompute",
			to.Format(time.DateOnly), today.Format(time.DateOnly), farm)
	}
	return nil
}
