package fleet

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/galewatch/galewatch/internal/text"
)

// The longest ids and names a fleet file may hold, each set by the tightest
// place the value goes (docs/operator.md, "Name limits", says the same;
// the CHECK constraints on farm, turbine and shard hold the registry to them too).
const (
	// MaxFarmID keeps the farm's nightly rollup schedule, a River periodic
	// job with id "rollup_schedule_<farm id>" (internal/jobs.ScheduleID),
	// under River's limit: river@v0.51.2 refuses a periodic job id of 128
	// characters or more (PeriodicJob.validate), and the farm then has no
	// nightly rollup. The other places a farm id goes are looser: the
	// report file <id>_<YYYY-MM>.json and its temporary
	// .<id>_<YYYY-MM>.json.<up to 10 digits> need id + 25 <= 255 bytes
	// (230), the API's {id} takes 200 bytes, advisory-lock keys hash it.
	MaxFarmID = 127 - len("rollup_schedule_")
	// MaxTurbineID is the farm id's limit. Nothing a turbine id names is
	// tighter (no job id, queue, file or database; an ingest line holds 64
	// KiB and a Postgres index key about 2,700 bytes), and one limit for
	// every id is the easier rule to keep in a head.
	MaxTurbineID = MaxFarmID
	// MaxFarmName is the longest display name, in characters (Unicode code
	// points, at most 4 bytes each). No consumer fails on a longer one; the
	// name is repeated in every heading, tile and chart title of the pages,
	// so its size is the page's (a 5 MiB name made a 15.7 MB status page),
	// and 100 holds any real farm's name with room to spare.
	MaxFarmName = 100
	// MaxShardName keeps "rollup_" + name within River's 64-character
	// queue names.
	MaxShardName = 64 - len("rollup_")
	// MaxDatabaseName is Postgres's identifier limit (NAMEDATALEN - 1):
	// longer names are silently truncated.
	MaxDatabaseName = 63
	// MaxStateCode is the longest controller state code (readings.state).
	MaxStateCode = 64
)

// What a fleet file may hold (docs/operator.md, "Size limits", says the
// same). Parse checks the size before reading further and the counts on
// the file's node tree before decoding it, so a refusal costs at most
// MaxFileBytes read and one linear parse. The demo fleet (fleet/demo.yaml:
// 21 farms, 1,240 turbines, one model) is 4.5 KB; the soak's (41 farms,
// 62,500 turbines) a few KB; each limit is far above a real operator's
// fleet (thousands of turbines over tens to hundreds of farms).
const (
	// MaxFileBytes bounds what parsing costs: yaml.v3 holds the whole file
	// as a node tree first, about 35 bytes of memory per byte of YAML for
	// a list of turbines one a line (35 MB for a file at the limit), up to
	// 150 for the costliest shape it reads (a flow list of one-character
	// values). 1 MiB holds 13,000 turbines listed one a line with their
	// commissioned_at (80 bytes each); a prefix/from/to line names up to
	// MaxRange.
	MaxFileBytes = 1 << 20
	// MaxFarms: each farm is a nightly River job and a row of every page;
	// five times the wind farms of the largest operators.
	MaxFarms = 1_000
	// MaxTurbines is the most a file may name (ranges expanded) and
	// MaxRange the most one prefix/from/to entry may: a typo (to:
	// 1000000000) must be an error, not an hour of expansion. 250,000 is
	// twice the soak's fleet at twice the design peak (124,700) and several
	// times the largest fleets; expanding it takes a fraction of a second.
	MaxTurbines = 250_000
	MaxRange    = 100_000
	// MaxModels: a fleet has a few dozen turbine models at most; recording
	// a new model samples its curve (model_curve_lut).
	MaxModels = 100
	// MaxCurvePoints is a curve given every 0.1 m/s from 0 to 30 m/s, the
	// finest manufacturers publish (they give 0.5 m/s bins, about 50
	// points): sampling a curve costs its points times 3,001 (0.1 s for
	// 301 points, 0.8 s for 3,001).
	MaxCurvePoints = 301
	// MaxStateCodes is the most state codes one contract maps: a
	// controller's whole status list is a few hundred. Each reading's
	// state is searched for in the list (reading_category_key's
	// array_position), so the list's length is paid per reading: 43,200
	// readings of 1,000 distinct codes cost 0.4 s (a turbine-day's
	// recompute is 0.35 s), of 4,000 codes 1.5 s.
	MaxStateCodes = 1_000
	// MaxMappingKeys bounds every other mapping of the file (none of its
	// structs has 20 fields): yaml.v3 compares each key of a mapping with
	// every other, a cost of the square of its keys.
	MaxMappingKeys = 64
	// MaxCadence is the longest reporting cadence, one day.
	MaxCadence = 86_400
	// MaxProblems is how many problems a refusal lists; the rest are
	// counted (a file of 100,000 bad entries is one screen, not 100,000).
	MaxProblems = 100
)

// MinEffectiveFrom is the earliest instant an apply's versions may start:
// the registry's readers take it for "since ever" (the version queries
// clamp first_day and valid_from to it; the window engine's service start
// is it), and before it zones keep local mean time. The zero time is far
// before it, so a parsed zero is refused, never read as "now".
var MinEffectiveFrom = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// CheckEffectiveFrom says what is wrong with an apply's --effective-from.
func CheckEffectiveFrom(t time.Time) error {
	if t.Before(MinEffectiveFrom) {
		return fmt.Errorf("--effective-from %s is before %s; give the instant the change took effect",
			t.UTC().Format(time.RFC3339), MinEffectiveFrom.Format(time.RFC3339))
	}
	return nil
}

// showLimit is how much of a value a message quotes whole; a longer value
// (a 5 MiB id) is quoted by its start and its length.
const showLimit = 128

// show quotes a value for a message, cutting a long one.
func show(s string) string {
	if len(s) <= showLimit {
		return strconv.Quote(s)
	}
	return strconv.Quote(clip(s, 40)) + fmt.Sprintf(" (%d bytes)", len(s))
}

// clip is s cut to at most n bytes on a character boundary, marked "…"
// when cut: a farm's label in messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// nameProblem says what is wrong with a farm's display name, or "".
func nameProblem(name string) string {
	if !utf8.ValidString(name) {
		return fmt.Sprintf("%s is not valid UTF-8", show(name))
	}
	if n := utf8.RuneCountInString(name); n > MaxFarmName {
		return fmt.Sprintf("%s is %d characters; at most %d", show(name), n, MaxFarmName)
	}
	// A name is printed back like an operator's note (pages, the plan,
	// reports): the same rule, internal/text.
	if err := text.Check(show(name), name); err != nil {
		return err.Error()
	}
	return ""
}

// lines finds where a value sits in the fleet file, for messages. The file
// is decoded again, as a node tree, only when a problem asks.
type lines struct {
	data   []byte
	root   *yaml.Node
	parsed bool
}

// at is "line N: " for the value at path (map keys and sequence indexes,
// from the top), or the nearest enclosing value found; "" without a file.
func (l *lines) at(path ...any) string {
	if l == nil || len(l.data) == 0 {
		return ""
	}
	if !l.parsed {
		l.parsed = true
		var doc yaml.Node
		if yaml.Unmarshal(l.data, &doc) == nil && len(doc.Content) > 0 {
			l.root = doc.Content[0]
		}
	}
	n := deref(l.root)
	if n == nil {
		return ""
	}
	line := n.Line
	for _, step := range path {
		var next *yaml.Node
		switch s := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == s {
						next = n.Content[i+1]
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && s >= 0 && s < len(n.Content) {
				next = n.Content[s]
			}
		}
		if next = deref(next); next == nil {
			break
		}
		n, line = next, next.Line
	}
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf("line %d: ", line)
}

// deref follows an alias to the value it names (an alias never names
// another alias; the bound only guards against a malformed tree).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// counts checks a fleet file's node tree against the count limits before
// it is decoded, reporting each problem through bad with the node it is
// at. Every node is visited once: an alias is not followed (its anchor is
// checked where it stands), except to count a list the file names by one.
type counts struct {
	bad func(n *yaml.Node, format string, args ...any)
	// turbines is the turbine entries seen; over is set once they pass
	// MaxTurbines (one problem, not one per farm after it).
	turbines int
	over     bool
}

// checkCounts is the problems of the document root's counts.
func checkCounts(root *yaml.Node, bad func(n *yaml.Node, format string, args ...any)) {
	c := &counts{bad: bad}
	if root == nil {
		return
	}
	if root.Kind != yaml.MappingNode {
		c.any(root, "the file")
		return
	}
	c.mapping(root, "the file")
	for key, v := range pairs(root) {
		c.any(key, "the file") // a key may be a mapping too
		switch key.Value {
		case "farms":
			c.list(v, "farms", "farms", MaxFarms, c.farm)
		case "models":
			c.list(v, "models", "models", MaxModels, c.model)
		default:
			c.any(v, key.Value)
		}
	}
}

// list checks a list of at most limit entries (field names it), and each
// entry of its own with entry.
func (c *counts) list(n *yaml.Node, field, what string, limit int, entry func(i int, e *yaml.Node)) {
	if d := deref(n); d != nil && d.Kind == yaml.SequenceNode && len(d.Content) > limit {
		c.bad(n, "%s: %d %s; at most %d", field, len(d.Content), what, limit)
	}
	if n.Kind != yaml.SequenceNode {
		c.any(n, field)
		return
	}
	for i, e := range n.Content {
		entry(i, e)
	}
}

// farm checks one farm entry: its contract's state codes and its turbine
// entries.
func (c *counts) farm(i int, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		c.any(n, "farms")
		return
	}
	at := func() string { return entryAt("farms", i, n, "id") }
	if c.wide(n) {
		c.mapping(n, at())
	}
	for key, v := range pairs(n) {
		c.any(key, "farms")
		switch {
		case key.Value == "contract" && v.Kind == yaml.MappingNode:
			if c.wide(v) {
				c.mapping(v, at()+".contract")
			}
			for key, v := range pairs(v) {
				c.any(key, "contract")
				if key.Value == "states" && v.Kind == yaml.MappingNode {
					if k := len(v.Content) / 2; k > MaxStateCodes {
						c.bad(v, "%s.contract.states: %d state codes; at most %d", at(), k, MaxStateCodes)
					}
					for _, e := range v.Content {
						c.any(e, "states")
					}
					continue
				}
				c.any(v, key.Value)
			}
		case key.Value == "turbines":
			if d := deref(v); d != nil && d.Kind == yaml.SequenceNode {
				c.turbines += len(d.Content)
			}
			if c.turbines > MaxTurbines && !c.over {
				c.over = true
				c.bad(v, "%s.turbines: the file has more than %d turbine entries; at most %d turbines", at(), MaxTurbines, MaxTurbines)
			}
			c.any(v, key.Value)
		default:
			c.any(v, key.Value)
		}
	}
}

// model checks one model entry's curve.
func (c *counts) model(i int, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		c.any(n, "models")
		return
	}
	if c.wide(n) {
		c.mapping(n, entryAt("models", i, n, "name"))
	}
	for key, v := range pairs(n) {
		c.any(key, "models")
		if d := deref(v); key.Value == "curve" && d != nil && d.Kind == yaml.SequenceNode && len(d.Content) > MaxCurvePoints {
			c.bad(v, "%s.curve: %d points; at most %d", entryAt("models", i, n, "name"), len(d.Content), MaxCurvePoints)
		}
		c.any(v, key.Value)
	}
}

// any checks every mapping under n (field names n's key) against
// MaxMappingKeys.
func (c *counts) any(n *yaml.Node, field string) {
	switch n.Kind {
	case yaml.MappingNode:
		c.mapping(n, field)
		for key, v := range pairs(n) {
			c.any(key, field)
			c.any(v, key.Value)
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, e := range n.Content {
			c.any(e, field)
		}
	}
}

// wide is whether mapping n has more than MaxMappingKeys keys.
func (c *counts) wide(n *yaml.Node) bool { return len(n.Content)/2 > MaxMappingKeys }

// mapping checks n's own keys (not its values'); field names n.
func (c *counts) mapping(n *yaml.Node, field string) {
	if c.wide(n) {
		c.bad(n, "%s: a mapping of %d keys; at most %d (only a contract's states may hold more)", field, len(n.Content)/2, MaxMappingKeys)
	}
}

// pairs yields a mapping node's keys and values.
func pairs(n *yaml.Node) func(yield func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if !yield(n.Content[i], n.Content[i+1]) {
				return
			}
		}
	}
}

// entryAt names entry i of a list for a message: "farms[3] (ardnave-point)"
// when its key field is a scalar.
func entryAt(list string, i int, n *yaml.Node, key string) string {
	for k, v := range pairs(n) {
		if k.Value == key && v.Kind == yaml.ScalarNode && v.Value != "" {
			return fmt.Sprintf("%s[%d] (%s)", list, i, clip(v.Value, 64))
		}
	}
	return fmt.Sprintf("%s[%d]", list, i)
}
