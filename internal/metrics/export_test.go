package metrics

// SetMaxRuns sets the bound of the marked runs a farm's backlog sums
// (DirtyBacklogGet's own when unset), so a test can reach it with a few
// rows.
func SetMaxRuns(m *Metrics, n int64) { m.gauges.maxRuns = &n }
