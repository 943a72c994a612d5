package fleet

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// Rules are the thresholds that define what a stored count means. They live
// in the control database, once (fleet_rules, per-farm overrides on farm,
// the effective values in farm_rules), and come from the fleet file; no
// flag or environment variable of any process changes them.
type Rules struct {
	// LaneThreshold: recorded_at this far behind received_at is backfill
	// lane, and counted in turbine_day.late.
	LaneThreshold time.Duration
	// EarlyTolerance: recorded_at this far ahead of received_at is early (a
	// fast clock), counted in turbine_day.early.
	EarlyTolerance time.Duration
	// FutureLimit: a clock further ahead than this is rejected at ingest.
	FutureLimit time.Duration
	// MaxAge: a reading recorded longer ago than this is rejected at ingest.
	MaxAge time.Duration
	// Window is the event-time window of the fast path and of corrections,
	// counted from farm-local midnight; MarkMargin is the write bound of the
	// dirty-mark rule (docs/dirty-marks.md).
	Window     time.Duration
	MarkMargin time.Duration
	// AllowedLateness: the fast path publishes a window once its end + this
	// has passed (the watermark is now - AllowedLateness).
	AllowedLateness time.Duration
	// DivergenceAlertPM: fast vs final above this many per mille of the
	// final raises an alert.
	DivergenceAlertPM int
	// CompletenessAlertPM: a closed farm-day received short of expected by
	// more than this many per mille raises an alert.
	CompletenessAlertPM int
	// PowerMinKW and PowerMaxKW bound a reading's power_kw, WindMaxMS its
	// wind_ms (from 0): a reading outside them is refused at ingest, so no
	// sentinel (3.0e38) reaches a sum. Whole kW and m/s.
	PowerMinKW, PowerMaxKW int
	WindMaxMS              int
}

// DefaultRules are the built-in fleet-wide defaults (the fleet_rules
// column defaults say the same; a test keeps them equal).
func DefaultRules() Rules {
	return Rules{
		LaneThreshold:  60 * time.Second,
		EarlyTolerance: 2 * time.Second,
		FutureLimit:    24 * time.Hour,
		MaxAge:         400 * 24 * time.Hour,
		Window:         time.Minute,
		MarkMargin:     30 * time.Second,

		AllowedLateness:     time.Minute,
		DivergenceAlertPM:   30,
		CompletenessAlertPM: 10,

		PowerMinKW: -1000,
		PowerMaxKW: 20_000,
		WindMaxMS:  100,
	}
}

// The ceilings of the value bounds (the database's CHECKs say the same):
// every energy sum is proved to fit its type for readings within them
// (docs/dba.md, "Bounded sums"); a turbine model's curve has the same
// power ceiling.
const (
	MaxPowerKW = 100_000
	MaxWindMS  = 200
)

// MinMarkMargin: a write transaction is bounded (ingest's TxTimeout, 20 s)
// below the mark margin, with room for clock skew between hosts; the
// database refuses less than this too.
const MinMarkMargin = 30 * time.Second

// RulesSpec is the fleet file's form of Rules: every field optional, as a
// duration ("60s", "24h", or whole days "400d").
type RulesSpec struct {
	LaneThreshold  *Duration `yaml:"lane_threshold"`
	EarlyTolerance *Duration `yaml:"early_tolerance"`
	FutureLimit    *Duration `yaml:"future_limit"`
	MaxAge         *Duration `yaml:"max_age"`
	Window         *Duration `yaml:"window"`
	MarkMargin     *Duration `yaml:"mark_margin"`

	AllowedLateness     *Duration `yaml:"allowed_lateness"`
	DivergenceAlertPM   *int      `yaml:"divergence_alert_per_mille"`
	CompletenessAlertPM *int      `yaml:"completeness_alert_per_mille"`
	PowerMinKW          *int      `yaml:"power_min_kw"`
	PowerMaxKW          *int      `yaml:"power_max_kw"`
	WindMaxMS           *int      `yaml:"wind_max_ms"`

	// Fleet-wide only (FleetRulesRejects): refused under a farm's rules.
	RejectRowsKept  *int      `yaml:"reject_rows_kept"`
	RejectRetention *Duration `yaml:"reject_retention"`
}

// FleetRulesRejects bound what is stored of refused lines. Fleet-wide only (a
// refused line may name no farm), in fleet_rules beside the per-farm
// defaults, from the fleet file's top-level rules:.
type FleetRulesRejects struct {
	// RowsKept: the first this many refused lines of a body or file are
	// stored verbatim in ingest_reject; the rest are counted per kind of
	// reason in one ingest_reject_summary row.
	RowsKept int
	// Retention: ingest_reject and ingest_reject_summary rows older than
	// this (whole days) are deleted by the partitions job.
	Retention time.Duration
}

// DefaultRejectRules are the built-in defaults (the fleet_rules column
// defaults say the same; a test keeps them equal).
func DefaultRejectRules() FleetRulesRejects {
	return FleetRulesRejects{RowsKept: 1000, Retention: 30 * 24 * time.Hour}
}

// MaxRejectRowsKept bounds reject_rows_kept (the database's CHECK says the same).
const MaxRejectRowsKept = 1_000_000

// RejectRulesFromRow converts the control database's fleet_rules columns.
func RejectRulesFromRow(r controldb.FleetRulesRejectsRow) FleetRulesRejects {
	return FleetRulesRejects{RowsKept: int(r.RejectRowsKept), Retention: time.Duration(r.RejectRetentionDays) * 24 * time.Hour}
}

// rejects returns r with the spec's reject rules applied.
func (spec RulesSpec) rejects(r FleetRulesRejects) FleetRulesRejects {
	if spec.RejectRowsKept != nil {
		r.RowsKept = *spec.RejectRowsKept
	}
	if spec.RejectRetention != nil {
		r.Retention = spec.RejectRetention.Duration
	}
	return r
}

// validate reports what is wrong with the reject rules at `at`.
func (r FleetRulesRejects) validate(at string, bad func(string, ...any)) {
	if r.RowsKept < 0 || r.RowsKept > MaxRejectRowsKept {
		bad("%s.reject_rows_kept: %d must be between 0 and %d", at, r.RowsKept, MaxRejectRowsKept)
	}
	if r.Retention < 24*time.Hour || r.Retention > 100_000*24*time.Hour {
		bad("%s.reject_retention: %s must be between 1d and 100000d", at, r.Retention)
	} else if r.Retention%(24*time.Hour) != 0 {
		bad("%s.reject_retention: %s is not a whole number of days", at, r.Retention)
	}
}

// farmOnly reports the fleet-wide-only rules a farm's rules: gives.
func (spec RulesSpec) farmOnly(at string, bad func(string, ...any)) {
	if spec.RejectRowsKept != nil {
		bad("%s.reject_rows_kept: fleet-wide only (a refused line may name no farm): set it in the top-level rules:", at)
	}
	if spec.RejectRetention != nil {
		bad("%s.reject_retention: fleet-wide only (a refused line may name no farm): set it in the top-level rules:", at)
	}
}

// Duration is a YAML duration: Go's syntax, or a whole number of days ("400d").
type Duration struct{ time.Duration }

// UnmarshalYAML reads "90s", "24h", "400d".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// ParseDuration parses Go's duration syntax or a whole number of days ("400d").
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 100_000 {
			return 0, fmt.Errorf("duration %q: want a whole number of days (400d) or a duration (24h, 60s)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want a duration (60s, 24h) or whole days (400d)", s)
	}
	return v, nil
}

// over returns r with the spec's fields applied.
func (spec RulesSpec) over(r Rules) Rules {
	set := func(dst *time.Duration, d *Duration) {
		if d != nil {
			*dst = d.Duration
		}
	}
	set(&r.LaneThreshold, spec.LaneThreshold)
	set(&r.EarlyTolerance, spec.EarlyTolerance)
	set(&r.FutureLimit, spec.FutureLimit)
	set(&r.MaxAge, spec.MaxAge)
	set(&r.Window, spec.Window)
	set(&r.MarkMargin, spec.MarkMargin)
	set(&r.AllowedLateness, spec.AllowedLateness)
	if spec.DivergenceAlertPM != nil {
		r.DivergenceAlertPM = *spec.DivergenceAlertPM
	}
	if spec.CompletenessAlertPM != nil {
		r.CompletenessAlertPM = *spec.CompletenessAlertPM
	}
	if spec.PowerMinKW != nil {
		r.PowerMinKW = *spec.PowerMinKW
	}
	if spec.PowerMaxKW != nil {
		r.PowerMaxKW = *spec.PowerMaxKW
	}
	if spec.WindMaxMS != nil {
		r.WindMaxMS = *spec.WindMaxMS
	}
	return r
}

// validate reports what is wrong with the rules in force at `at`.
func (r Rules) validate(at string, bad func(string, ...any)) {
	whole := func(name string, d, unit time.Duration, unitName string) {
		if d%unit != 0 {
			bad("%s.%s: %s is not a whole number of %s", at, name, d, unitName)
		}
	}
	if r.LaneThreshold <= 0 {
		bad("%s.lane_threshold: %s must be positive", at, r.LaneThreshold)
	}
	whole("lane_threshold", r.LaneThreshold, time.Millisecond, "milliseconds")
	if r.EarlyTolerance < 0 {
		bad("%s.early_tolerance: %s must not be negative", at, r.EarlyTolerance)
	}
	whole("early_tolerance", r.EarlyTolerance, time.Millisecond, "milliseconds")
	if r.FutureLimit < time.Second {
		bad("%s.future_limit: %s must be at least 1s", at, r.FutureLimit)
	}
	whole("future_limit", r.FutureLimit, time.Second, "seconds")
	if r.MaxAge < 24*time.Hour {
		bad("%s.max_age: %s must be at least 1d", at, r.MaxAge)
	}
	whole("max_age", r.MaxAge, 24*time.Hour, "days")
	if r.Window < time.Second || r.Window > 24*time.Hour {
		bad("%s.window: %s must be between 1s and 24h", at, r.Window)
	}
	whole("window", r.Window, time.Second, "seconds")
	if r.MarkMargin < MinMarkMargin {
		bad("%s.mark_margin: %s must be at least %s (a write transaction must end well within it)", at, r.MarkMargin, MinMarkMargin)
	}
	whole("mark_margin", r.MarkMargin, time.Second, "seconds")
	if r.AllowedLateness < 0 || r.AllowedLateness > 24*time.Hour {
		bad("%s.allowed_lateness: %s must be between 0s and 24h", at, r.AllowedLateness)
	}
	whole("allowed_lateness", r.AllowedLateness, time.Second, "seconds")
	if r.DivergenceAlertPM <= 0 || r.DivergenceAlertPM > 1000 {
		bad("%s.divergence_alert_per_mille: %d must be between 1 and 1000", at, r.DivergenceAlertPM)
	}
	if r.CompletenessAlertPM <= 0 || r.CompletenessAlertPM > 1000 {
		bad("%s.completeness_alert_per_mille: %d must be between 1 and 1000", at, r.CompletenessAlertPM)
	}
	if r.PowerMinKW < -MaxPowerKW || r.PowerMinKW > MaxPowerKW {
		bad("%s.power_min_kw: %d must be between %d and %d", at, r.PowerMinKW, -MaxPowerKW, MaxPowerKW)
	}
	if r.PowerMaxKW < -MaxPowerKW || r.PowerMaxKW > MaxPowerKW {
		bad("%s.power_max_kw: %d must be between %d and %d (the ceiling every energy sum is proved for)", at, r.PowerMaxKW, -MaxPowerKW, MaxPowerKW)
	}
	if r.PowerMinKW >= r.PowerMaxKW {
		bad("%s.power_min_kw: %d must be below power_max_kw (%d)", at, r.PowerMinKW, r.PowerMaxKW)
	}
	if r.WindMaxMS < 1 || r.WindMaxMS > MaxWindMS {
		bad("%s.wind_max_ms: %d must be between 1 and %d", at, r.WindMaxMS, MaxWindMS)
	}
	const maxInt32 = 1<<31 - 1
	if r.LaneThreshold.Milliseconds() > maxInt32 || r.EarlyTolerance.Milliseconds() > maxInt32 ||
		r.FutureLimit/time.Second > maxInt32 || r.MarkMargin/time.Second > maxInt32 || r.MaxAge/(24*time.Hour) > 100_000 {
		bad("%s: a rule is out of range", at)
	}
}

// RulesOfDay is the rules of the farm version governing one day
// (FarmDayGet).
func RulesOfDay(d controldb.FarmDayGetRow) Rules {
	return RulesFromRow(controldb.FarmRule{
		FarmID: d.ID, LaneThresholdMs: d.LaneThresholdMs, EarlyToleranceMs: d.EarlyToleranceMs,
		FutureLimitS: d.FutureLimitS, MaxAgeDays: d.MaxAgeDays, WindowS: d.WindowS, MarkMarginS: d.MarkMarginS,
		AllowedLatenessS: d.AllowedLatenessS, DivergenceAlertPm: d.DivergenceAlertPm, CompletenessAlertPm: d.CompletenessAlertPm,
		PowerMinKw: d.PowerMinKw, PowerMaxKw: d.PowerMaxKw, WindMaxMs: d.WindMaxMs,
	})
}

// RulesFromRow converts the control database's row (farm_rules).
func RulesFromRow(r controldb.FarmRule) Rules {
	return Rules{
		LaneThreshold:       time.Duration(r.LaneThresholdMs) * time.Millisecond,
		EarlyTolerance:      time.Duration(r.EarlyToleranceMs) * time.Millisecond,
		FutureLimit:         time.Duration(r.FutureLimitS) * time.Second,
		MaxAge:              time.Duration(r.MaxAgeDays) * 24 * time.Hour,
		Window:              time.Duration(r.WindowS) * time.Second,
		MarkMargin:          time.Duration(r.MarkMarginS) * time.Second,
		AllowedLateness:     time.Duration(r.AllowedLatenessS) * time.Second,
		DivergenceAlertPM:   int(r.DivergenceAlertPm),
		CompletenessAlertPM: int(r.CompletenessAlertPm),
		PowerMinKW:          int(r.PowerMinKw),
		PowerMaxKW:          int(r.PowerMaxKw),
		WindMaxMS:           int(r.WindMaxMs),
	}
}

func (r Rules) fleetParams(rej FleetRulesRejects) controldb.FleetRulesPutParams {
	if rej == (FleetRulesRejects{}) {
		rej = DefaultRejectRules() // a Plan built in code, not parsed
	}
	return controldb.FleetRulesPutParams{
		RejectRowsKept: int32(rej.RowsKept), RejectRetentionDays: int32(rej.Retention / (24 * time.Hour)),
		LaneThresholdMs: int32(r.LaneThreshold.Milliseconds()), EarlyToleranceMs: int32(r.EarlyTolerance.Milliseconds()),
		FutureLimitS: int32(r.FutureLimit / time.Second), MaxAgeDays: int32(r.MaxAge / (24 * time.Hour)),
		WindowS: int32(r.Window / time.Second), MarkMarginS: int32(r.MarkMargin / time.Second),
		AllowedLatenessS: int32(r.AllowedLateness / time.Second), DivergenceAlertPm: int32(r.DivergenceAlertPM),
		CompletenessAlertPm: int32(r.CompletenessAlertPM), PowerMinKw: int32(r.PowerMinKW), PowerMaxKw: int32(r.PowerMaxKW),
		WindMaxMs: int32(r.WindMaxMS),
	}
}

// String names every rule and its value, as the fleet file writes them.
func (r Rules) String() string {
	return fmt.Sprintf("lane_threshold %s, early_tolerance %s, future_limit %s, max_age %dd, window %s, mark_margin %s, allowed_lateness %s, divergence_alert_per_mille %d, completeness_alert_per_mille %d, power_min_kw %d, power_max_kw %d, wind_max_ms %d",
		r.LaneThreshold, r.EarlyTolerance, r.FutureLimit, int(r.MaxAge/(24*time.Hour)), r.Window, r.MarkMargin,
		r.AllowedLateness, r.DivergenceAlertPM, r.CompletenessAlertPM, r.PowerMinKW, r.PowerMaxKW, r.WindMaxMS)
}

// overrideParams fills a farm upsert's override columns from its spec
// (nil = the fleet default).
func (spec RulesSpec) overrideParams(p *controldb.FarmUpsertParams) {
	ms := func(d *Duration) *int32 {
		if d == nil {
			return nil
		}
		v := int32(d.Milliseconds())
		return &v
	}
	per := func(d *Duration, unit time.Duration) *int32 {
		if d == nil {
			return nil
		}
		v := int32(d.Duration / unit)
		return &v
	}
	p.LaneThresholdMs, p.EarlyToleranceMs = ms(spec.LaneThreshold), ms(spec.EarlyTolerance)
	p.FutureLimitS, p.MaxAgeDays = per(spec.FutureLimit, time.Second), per(spec.MaxAge, 24*time.Hour)
	p.WindowS, p.MarkMarginS = per(spec.Window, time.Second), per(spec.MarkMargin, time.Second)
	p.AllowedLatenessS = per(spec.AllowedLateness, time.Second)
	pm := func(v *int) *int32 {
		if v == nil {
			return nil
		}
		x := int32(*v)
		return &x
	}
	p.DivergenceAlertPm, p.CompletenessAlertPm = pm(spec.DivergenceAlertPM), pm(spec.CompletenessAlertPM)
	p.PowerMinKw, p.PowerMaxKw, p.WindMaxMs = pm(spec.PowerMinKW), pm(spec.PowerMaxKW), pm(spec.WindMaxMS)
}

// Changes lists the rules that differ from r to o, as "name old → new".
func (r Rules) Changes(o Rules) []string {
	var out []string
	add := func(name string, a, b time.Duration) {
		if a != b {
			out = append(out, fmt.Sprintf("%s %s → %s", name, a, b))
		}
	}
	add("lane_threshold", r.LaneThreshold, o.LaneThreshold)
	add("early_tolerance", r.EarlyTolerance, o.EarlyTolerance)
	add("future_limit", r.FutureLimit, o.FutureLimit)
	add("max_age", r.MaxAge, o.MaxAge)
	add("window", r.Window, o.Window)
	add("mark_margin", r.MarkMargin, o.MarkMargin)
	add("allowed_lateness", r.AllowedLateness, o.AllowedLateness)
	if r.DivergenceAlertPM != o.DivergenceAlertPM {
		out = append(out, fmt.Sprintf("divergence_alert_per_mille %d → %d", r.DivergenceAlertPM, o.DivergenceAlertPM))
	}
	if r.CompletenessAlertPM != o.CompletenessAlertPM {
		out = append(out, fmt.Sprintf("completeness_alert_per_mille %d → %d", r.CompletenessAlertPM, o.CompletenessAlertPM))
	}
	for _, b := range []struct {
		name string
		a, b int
	}{{"power_min_kw", r.PowerMinKW, o.PowerMinKW}, {"power_max_kw", r.PowerMaxKW, o.PowerMaxKW}, {"wind_max_ms", r.WindMaxMS, o.WindMaxMS}} {
		if b.a != b.b {
			out = append(out, fmt.Sprintf("%s %d → %d", b.name, b.a, b.b))
		}
	}
	return out
}

// Consequence says what a change of rules does to what is already stored:
// nothing is recomputed by itself.
func (c RuleChange) Consequence() string {
	var notes []string
	if c.From.LaneThreshold != c.To.LaneThreshold || c.From.EarlyTolerance != c.To.EarlyTolerance {
		notes = append(notes, "new readings take the new lanes at once; turbine_day rows already computed keep their late/early counts "+
			"until their day is next recomputed (received and available do not depend on these rules; `orchestrator rollup --farm "+c.FarmID+" --from D --to D` recomputes them)")
	}
	if c.From.FutureLimit != c.To.FutureLimit || c.From.MaxAge != c.To.MaxAge ||
		c.From.PowerMinKW != c.To.PowerMinKW || c.From.PowerMaxKW != c.To.PowerMaxKW || c.From.WindMaxMS != c.To.WindMaxMS {
		notes = append(notes, "the ingest limits apply to readings arriving from now on; stored readings stay")
	}
	if c.From.MarkMargin != c.To.MarkMargin || c.From.AllowedLateness != c.To.AllowedLateness {
		notes = append(notes, "the dirty-mark rule and the fast path's watermark apply from now on: windows already published keep their fast rows, marks already written stay")
	}
	if c.From.Window != c.To.Window {
		notes = append(notes, "windows are cut at the new length from the next window the fast path publishes; windows already published keep their rows; "+
			"the day in progress is re-cut on the new grid from the readings by its day rollup, so its turbine_day rows still add up from one grid; "+
			"a day already closed keeps its windows until a correction re-cuts the windows it touches, or `orchestrator rollup --farm "+c.FarmID+" --from D --to D` closes it again on the new grid (deleting its old-grid parts and final rows)")
	}
	if c.From.DivergenceAlertPM != c.To.DivergenceAlertPM || c.From.CompletenessAlertPM != c.To.CompletenessAlertPM {
		notes = append(notes, "alert thresholds apply to measurements from now on; alerts already raised stay")
	}
	return strings.Join(notes, "; ")
}
