package fleet

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
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
)

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
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Sprintf("%s has a control character (%U); a name is one line of text", show(name), r)
		}
	}
	if n := utf8.RuneCountInString(name); n > MaxFarmName {
		return fmt.Sprintf("%s is %d characters; at most %d", show(name), n, MaxFarmName)
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
