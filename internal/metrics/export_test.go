package metrics

// SetMaxCount sets the bound of the scrape's counts (DefaultMaxCount), so a
// test can reach it with a few rows.
func SetMaxCount(m *Metrics, n int64) { m.gauges.maxCount = n }
