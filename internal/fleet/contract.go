package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/galewatch/galewatch/internal/db/controldb"
	"github.com/galewatch/galewatch/internal/text"
)

// Category is one IEC 61400-26-1 information category: its id (the index of
// category_slots), the code a fleet file names it by, its default priority
// rank (1 wins) and default class. The control database's
// availability_category is the rule; this copy validates a fleet file
// before it reaches a database (TestCategoriesAreTheControlDatabases keeps
// the two equal).
type Category struct {
	ID       int
	Code     string
	Priority int
	Class    string // available, unavailable or excluded
}

// Categories are the information categories, by id.
var Categories = []Category{
	{1, "full_performance", 12, "available"},
	{2, "partial_performance", 11, "available"},
	{3, "ready_standby", 10, "available"},
	{4, "technical_standby", 9, "available"},
	{5, "out_of_environmental_spec", 4, "available"},
	{6, "requested_shutdown", 3, "available"},
	{7, "out_of_electrical_spec", 2, "available"},
	{8, "scheduled_maintenance", 5, "unavailable"},
	{9, "planned_corrective_action", 6, "unavailable"},
	{10, "forced_outage", 8, "unavailable"},
	{11, "suspended", 7, "unavailable"},
	{12, "force_majeure", 1, "unavailable"},
	{13, "information_unavailable", 13, "unavailable"},
}

// CategoryByCode finds a category by its code.
func CategoryByCode(code string) (Category, bool) {
	for _, c := range Categories {
		if c.Code == code {
			return c, true
		}
	}
	return Category{}, false
}

// DefaultContractHash names the default contract (availability_contract row
// 1): a farm without contract: counts by it, and its counts are those from
// before contracts.
const DefaultContractHash = "default"

// ContractSpec is a farm's availability contract in the fleet file
// (docs/operator.md, "Availability contract").
type ContractSpec struct {
	Name string `yaml:"name"`
	// WarrantyPct is the warranted contractual availability (%, 0.1 steps).
	WarrantyPct *float64 `yaml:"warranty_pct"`
	// CutInMS and CutOutMS bound the wind in which a turbine is expected to
	// run: a reading no state code maps, with wind below cut-in or at or
	// above cut-out, is out of environmental specification.
	CutInMS  *float64 `yaml:"cut_in_ms"`
	CutOutMS *float64 `yaml:"cut_out_ms"`
	// States maps controller state codes to category codes.
	States StateCodes `yaml:"states"`
	// Available and Excluded list categories by code; every other category
	// counts as unavailable. Absent: the categories' default classes (less
	// those the other list names).
	Available []string `yaml:"available"`
	Excluded  []string `yaml:"excluded"`
	// Priority lists every category, highest first. Absent: the default.
	Priority []string `yaml:"priority"`
	// The contract year and its settlement (docs/report-user.md, "The
	// contract year"): YearStart is MM-DD (default 01-01); LDs per
	// percentage point below the warranty or per MWh of the shortfall (one
	// of them), an optional cap a year, an optional bonus above a
	// threshold; Currency labels every amount.
	YearStart     string    `yaml:"year_start"`
	Currency      string    `yaml:"currency"`
	LDPerPoint    *PerPoint `yaml:"ld_per_point"`
	LDPerMWh      *float64  `yaml:"ld_per_mwh"`
	LDCap         *float64  `yaml:"ld_cap"`
	BonusAbovePct *float64  `yaml:"bonus_above_pct"`
	BonusPerPoint *PerPoint `yaml:"bonus_per_point"`
}

// PerPoint is an amount per percentage point for a whole contract year of
// one turbine (per: turbine) or of the farm (per: farm).
type PerPoint struct {
	Amount *float64 `yaml:"amount"`
	Per    string   `yaml:"per"`
}

// MaxMoney bounds an amount of a contract's terms (numeric(14, 2)).
const MaxMoney = 999_999_999_999.99

// StateCodes maps controller state codes to category codes (a contract's
// states:).
type StateCodes map[string]string

// UnmarshalYAML reads a states: mapping in one pass, finding a repeated
// code with a set: yaml.v3's own check of a mapping's keys compares every
// pair (100,000 codes took 53 s). A merge (<<: *anchor) adds the anchor's
// codes the mapping does not give, as yaml.v3 merges; what is read,
// merges included, is bounded by MaxStateCodes (mappings and codes).
func (s *StateCodes) UnmarshalYAML(n *yaml.Node) error {
	codes := StateCodes{}
	var errs []string
	budget := MaxStateCodes + 1 // the codes and the mappings read, this one included
	var read func(n *yaml.Node)
	read = func(n *yaml.Node) {
		if budget--; budget < 0 {
			return
		}
		line := n.Line
		if n = deref(n); n == nil || n.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Sprintf("line %d: states: want a mapping of state code to category", line))
			return
		}
		seen := make(map[string]int, len(n.Content)/2) // this mapping's codes: their line
		var merges []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if isMerge(k) {
				merges = append(merges, v)
				continue
			}
			if budget--; budget < 0 {
				return
			}
			code, ok := scalarText(k)
			if !ok {
				errs = append(errs, fmt.Sprintf("line %d: states: a state code must be text", k.Line))
				continue
			}
			category, ok := scalarText(v)
			if !ok {
				errs = append(errs, fmt.Sprintf("line %d: states[%s]: a category must be text", v.Line, clip(code, 64)))
				continue
			}
			if first, twice := seen[code]; twice {
				errs = append(errs, fmt.Sprintf("line %d: states: state code %s given twice (first at line %d)", k.Line, show(code), first))
				continue
			}
			seen[code] = k.Line
			if _, merged := codes[code]; !merged {
				codes[code] = category
			}
		}
		for _, m := range merges {
			if d := deref(m); d != nil && d.Kind == yaml.SequenceNode {
				for _, e := range d.Content {
					read(e)
				}
			} else {
				read(m)
			}
		}
	}
	read(n)
	if budget < 0 {
		errs = append(errs, fmt.Sprintf("line %d: states: more than %d state codes and merged mappings; at most %d state codes", n.Line, MaxStateCodes, MaxStateCodes))
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	*s = codes
	return nil
}

// scalarText is a node decoded as a string, as yaml.v3 decodes one into
// a map[string]string (a string as it is, without a decoder each).
func scalarText(n *yaml.Node) (string, bool) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return n.Value, true
	}
	var s string
	return s, n.Decode(&s) == nil
}

// isMerge is whether a mapping key is YAML's merge key (<<), as yaml.v3
// reads it.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" &&
		(k.Tag == "" || k.Tag == "!" || k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge")
}

// Contract is a validated contract in its canonical form: what the control
// database stores (availability_contract) and what its hash is of.
type Contract struct {
	Name            string   `json:"name"`
	WarrantyPM      *int32   `json:"warranty_pm,omitempty"`
	CutInMS         *float32 `json:"cut_in_ms,omitempty"`
	CutOutMS        *float32 `json:"cut_out_ms,omitempty"`
	StateCodes      []string `json:"state_codes"`
	StateCategories []string `json:"state_categories"`
	Available       []string `json:"available"`
	Excluded        []string `json:"excluded"`
	Priority        []string `json:"priority"`
	// Settlement terms, empty when not given (so a contract without them
	// hashes as it did before they existed). Amounts as decimal text.
	YearStart     string `json:"year_start,omitempty"` // MM-DD; empty: 01-01
	Currency      string `json:"currency,omitempty"`
	LDPerPoint    string `json:"ld_per_point,omitempty"`
	LDPer         string `json:"ld_per,omitempty"`
	LDPerMWh      string `json:"ld_per_mwh,omitempty"`
	LDCap         string `json:"ld_cap,omitempty"`
	BonusAbovePM  *int32 `json:"bonus_above_pm,omitempty"`
	BonusPerPoint string `json:"bonus_per_point,omitempty"`
	BonusPer      string `json:"bonus_per,omitempty"`
}

// Hash is the sha256 of the canonical form (hex).
func (c *Contract) Hash() string {
	b, _ := json.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CountingHash is the hash of what sorts slots: the canonical form without
// the name, warranty, year start and settlement terms (none of them is in a
// stored count). A version whose contract changes only those recounts no day.
func (c *Contract) CountingHash() string {
	counting := *c
	counting.Name, counting.WarrantyPM = "", nil
	counting.YearStart, counting.Currency, counting.LDPerPoint, counting.LDPer, counting.LDPerMWh = "", "", "", "", ""
	counting.LDCap, counting.BonusAbovePM, counting.BonusPerPoint, counting.BonusPer = "", nil, "", ""
	return counting.Hash()
}

// params is ContractEnsure's arguments.
func (c *Contract) params() controldb.ContractEnsureParams {
	p := controldb.ContractEnsureParams{
		Hash: c.Hash(), CountingHash: c.CountingHash(), Name: c.Name, StateCodes: c.StateCodes, StateCategories: c.StateCategories,
		CutInMs: c.CutInMS, CutOutMs: c.CutOutMS, Priority: c.Priority, Available: c.Available, Excluded: c.Excluded,
		WarrantyPm: c.WarrantyPM, YearStartMonth: 1, YearStartDay: 1,
		Currency: optional(c.Currency), LdPerPoint: optional(c.LDPerPoint), LdPer: optional(c.LDPer),
		LdPerMwh: optional(c.LDPerMWh), LdCap: optional(c.LDCap), BonusAbovePm: c.BonusAbovePM,
		BonusPerPoint: optional(c.BonusPerPoint), BonusPer: optional(c.BonusPer),
	}
	if c.YearStart != "" {
		fmt.Sscanf(c.YearStart, "%02d-%02d", &p.YearStartMonth, &p.YearStartDay)
	}
	return p
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// resolve validates the spec (reporting each problem through bad, at names
// it) and returns its canonical form.
func (s *ContractSpec) resolve(farm, at string, bad func(format string, args ...any)) *Contract {
	c := &Contract{Name: s.Name, StateCodes: []string{}, StateCategories: []string{}}
	if c.Name == "" {
		c.Name = farm
	} else if err := text.Check(at+".name", c.Name); err != nil {
		bad("%v", err) // printed in the report's contract column
	} else if msg := nameProblem(c.Name); msg != "" {
		bad("%s.name: %s", at, msg)
	}
	known := func(field, code string) bool {
		if _, ok := CategoryByCode(code); !ok {
			bad("%s.%s: unknown category %s (one of %s)", at, field, show(code), strings.Join(categoryCodes(), ", "))
			return false
		}
		return true
	}
	if s.WarrantyPct != nil {
		w := *s.WarrantyPct
		pm := math.Round(w * 10)
		if w <= 0 || w > 100 || math.Abs(pm-w*10) > 1e-9 {
			bad("%s.warranty_pct: %v must be a percentage in (0, 100] with at most one decimal", at, w)
		} else {
			v := int32(pm)
			c.WarrantyPM = &v
		}
	}
	wind := func(field string, v *float64) *float32 {
		if v == nil {
			return nil
		}
		if *v < 0 || *v > 100 || math.IsNaN(*v) {
			bad("%s.%s: %v m/s must be between 0 and 100", at, field, *v)
			return nil
		}
		f := float32(*v)
		return &f
	}
	c.CutInMS, c.CutOutMS = wind("cut_in_ms", s.CutInMS), wind("cut_out_ms", s.CutOutMS)
	if c.CutInMS != nil && c.CutOutMS != nil && *c.CutInMS >= *c.CutOutMS {
		bad("%s: cut_in_ms %v must be below cut_out_ms %v", at, *s.CutInMS, *s.CutOutMS)
	}
	if len(s.States) > MaxStateCodes {
		bad("%s.states: %d state codes; at most %d", at, len(s.States), MaxStateCodes)
		return c
	}
	codes := make([]string, 0, len(s.States))
	for code := range s.States {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		switch {
		case code == "":
			bad("%s.states: an empty state code (a reading without a state is sorted by its available flag and wind)", at)
		case len(code) > MaxStateCode || !utf8.ValidString(code) || strings.ContainsFunc(code, unicode.IsControl):
			bad("%s.states: state code %s must be at most %d bytes of text", at, show(code), MaxStateCode)
		case known("states["+code+"]", s.States[code]):
			c.StateCodes = append(c.StateCodes, code)
			c.StateCategories = append(c.StateCategories, s.States[code])
		}
	}
	list := func(field string, codes []string) []string {
		out := []string{}
		for _, code := range codes {
			if known(field, code) {
				if slices.Contains(out, code) {
					bad("%s.%s: %s listed twice", at, field, show(code))
					continue
				}
				out = append(out, code)
			}
		}
		return out
	}
	if s.Available == nil {
		// the default class, less what the contract excludes
		for _, cat := range Categories {
			if cat.Class == "available" && !slices.Contains(s.Excluded, cat.Code) {
				c.Available = append(c.Available, cat.Code)
			}
		}
	} else {
		c.Available = list("available", s.Available)
	}
	if s.Excluded == nil {
		c.Excluded = []string{}
		for _, cat := range Categories {
			if cat.Class == "excluded" && !slices.Contains(c.Available, cat.Code) {
				c.Excluded = append(c.Excluded, cat.Code)
			}
		}
	} else {
		c.Excluded = list("excluded", s.Excluded)
	}
	for _, code := range c.Excluded {
		if slices.Contains(c.Available, code) {
			bad("%s: %s is both available and excluded", at, show(code))
		}
	}
	sortByID(c.Available)
	sortByID(c.Excluded)
	if s.Priority == nil {
		byRank := slices.Clone(Categories)
		sort.Slice(byRank, func(i, j int) bool { return byRank[i].Priority < byRank[j].Priority })
		for _, cat := range byRank {
			c.Priority = append(c.Priority, cat.Code)
		}
	} else {
		c.Priority = list("priority", s.Priority)
		if len(c.Priority) == len(s.Priority) && len(c.Priority) != len(Categories) {
			var missing []string
			for _, cat := range Categories {
				if !slices.Contains(c.Priority, cat.Code) {
					missing = append(missing, cat.Code)
				}
			}
			bad("%s.priority: must list every category once; missing %s", at, strings.Join(missing, ", "))
		}
	}
	s.resolveTerms(c, at, bad)
	return c
}

// yearStart is a contract year's first day, MM-DD, the day 01-28: each
// contract month starts on that day of its month, which every month has.
var yearStart = regexp.MustCompile(`^(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])$`)

// currencyCode is an ISO 4217 code's shape.
var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// resolveTerms validates the contract year and settlement terms into c.
func (s *ContractSpec) resolveTerms(c *Contract, at string, bad func(format string, args ...any)) {
	if s.YearStart != "" && s.YearStart != "01-01" {
		if !yearStart.MatchString(s.YearStart) {
			bad("%s.year_start: %s must be a day of the year as MM-DD, e.g. 04-01, with the day 01-28 (each contract month starts on that day, which every month has)", at, show(s.YearStart))
		} else {
			c.YearStart = s.YearStart
		}
	}
	money := func(field string, v *float64) string {
		if v == nil {
			return ""
		}
		cents := math.Round(*v * 100)
		if math.IsNaN(*v) || *v < 0 || *v > MaxMoney || math.Abs(cents-*v*100) > 1e-6 {
			bad("%s.%s: %v must be an amount from 0 to %.2f with at most two decimals", at, field, *v, MaxMoney)
			return ""
		}
		return strconv.FormatFloat(cents/100, 'f', 2, 64)
	}
	per := func(field string, p *PerPoint) (amount, basis string) {
		if p == nil {
			return "", ""
		}
		if p.Amount == nil {
			bad("%s.%s.amount: missing (the amount per percentage point)", at, field)
		}
		if p.Per != "turbine" && p.Per != "farm" {
			bad("%s.%s.per: %s must be turbine or farm (what a point's amount is for, for a whole contract year)", at, field, show(p.Per))
			return money(field+".amount", p.Amount), ""
		}
		return money(field+".amount", p.Amount), p.Per
	}
	c.LDPerPoint, c.LDPer = per("ld_per_point", s.LDPerPoint)
	c.LDPerMWh = money("ld_per_mwh", s.LDPerMWh)
	c.LDCap = money("ld_cap", s.LDCap)
	c.BonusPerPoint, c.BonusPer = per("bonus_per_point", s.BonusPerPoint)
	if s.LDPerPoint != nil && s.LDPerMWh != nil {
		bad("%s: ld_per_point and ld_per_mwh: give one (LDs per percentage point or per MWh of the shortfall)", at)
	}
	if s.LDCap != nil && s.LDPerPoint == nil && s.LDPerMWh == nil {
		bad("%s.ld_cap: a cap without LDs (give ld_per_point or ld_per_mwh)", at)
	}
	if s.BonusAbovePct != nil {
		w := *s.BonusAbovePct
		pm := math.Round(w * 10)
		switch {
		case w <= 0 || w > 100 || math.Abs(pm-w*10) > 1e-9:
			bad("%s.bonus_above_pct: %v must be a percentage in (0, 100] with at most one decimal", at, w)
		case c.WarrantyPM != nil && int32(pm) <= *c.WarrantyPM:
			bad("%s.bonus_above_pct: %v must be above warranty_pct %v", at, w, float64(*c.WarrantyPM)/10)
		default:
			v := int32(pm)
			c.BonusAbovePM = &v
		}
	}
	if (s.BonusAbovePct == nil) != (s.BonusPerPoint == nil) {
		bad("%s: bonus_above_pct and bonus_per_point go together (the threshold and the amount per point above it)", at)
	}
	terms := s.LDPerPoint != nil || s.LDPerMWh != nil || s.BonusPerPoint != nil
	if terms && s.WarrantyPct == nil {
		bad("%s: LDs and a bonus are measured against warranty_pct: give it", at)
	}
	switch {
	case s.Currency != "" && !currencyCode.MatchString(s.Currency):
		bad("%s.currency: %s must be a currency code of three capital letters (ISO 4217, e.g. GBP, EUR)", at, show(s.Currency))
	case s.Currency == "" && terms:
		bad("%s.currency: missing (the currency of ld_per_point, ld_per_mwh, ld_cap and bonus_per_point, e.g. GBP)", at)
	default:
		c.Currency = s.Currency
	}
}

func categoryCodes() []string {
	out := make([]string, len(Categories))
	for i, c := range Categories {
		out[i] = c.Code
	}
	return out
}

// sortByID orders category codes by id (a class is a set: its order is no
// part of the contract).
func sortByID(codes []string) {
	sort.Slice(codes, func(i, j int) bool {
		a, _ := CategoryByCode(codes[i])
		b, _ := CategoryByCode(codes[j])
		return a.ID < b.ID
	})
}

// String names the contract for a change list.
func (c *Contract) String() string {
	if c == nil {
		return "default"
	}
	return fmt.Sprintf("%s (%s)", c.Name, c.Hash()[:12])
}
