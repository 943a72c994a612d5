package fleet

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // zone validation must not depend on the host's tzdata

	"gopkg.in/yaml.v3"
)

// File is a parsed fleet file (format in docs/operator.md, "Fleet file").
type File struct {
	// Rules are the fleet-wide defaults of the rules that define stored
	// counts; absent ones are DefaultRules'.
	Rules  RulesSpec   `yaml:"rules"`
	Shards []ShardSpec `yaml:"shards"`
	// Models are the turbine models farms name (model:), with their power
	// curves.
	Models []ModelSpec `yaml:"models"`
	Farms  []FarmSpec  `yaml:"farms"`
}

// ShardSpec names a shard; DSN empty means a database of the control server.
type ShardSpec struct {
	Name string `yaml:"name"`
	DSN  string `yaml:"dsn"`
}

// FarmSpec is one farm and its turbine entries.
type FarmSpec struct {
	ID             string `yaml:"id"`
	Name           string `yaml:"name"`
	Timezone       string `yaml:"timezone"`
	CadenceSeconds int    `yaml:"cadence_seconds"`
	// CommissionedAt is the default of its turbine entries' (a farm's
	// turbines are otherwise in service from the apply that adds them).
	CommissionedAt *time.Time `yaml:"commissioned_at"`
	// Rules override the fleet-wide rules for this farm.
	Rules RulesSpec `yaml:"rules"`
	// Contract is the farm's availability contract (nil: the default).
	Contract *ContractSpec `yaml:"contract"`
	// Model names the turbine model of the farm's turbines (models:); its
	// power curve gives the potential energy. Empty: none.
	Model    string        `yaml:"model"`
	Turbines []TurbineSpec `yaml:"turbines"`
}

// TurbineSpec is either one turbine (ID) or a numbered range (Prefix, From, To).
type TurbineSpec struct {
	ID               string     `yaml:"id"`
	Prefix           string     `yaml:"prefix"`
	From             int        `yaml:"from"`
	To               int        `yaml:"to"`
	Digits           int        `yaml:"digits"`
	Shard            string     `yaml:"shard"`
	CadenceSeconds   int        `yaml:"cadence_seconds"`
	CommissionedAt   *time.Time `yaml:"commissioned_at"`
	DecommissionedAt *time.Time `yaml:"decommissioned_at"`
}

// Turbine is one expanded, validated turbine.
type Turbine struct {
	ID               string
	FarmID           string
	Shard            string
	CadenceSeconds   int
	CommissionedAt   *time.Time
	DecommissionedAt *time.Time
}

// Plan is a validated fleet file, turbines expanded.
type Plan struct {
	// Rules are the fleet-wide defaults (the file's over DefaultRules).
	Rules Rules
	// Rejects are the fleet-wide reject rules (the file's over
	// DefaultRejectRules).
	Rejects  FleetRulesRejects
	Shards   []ShardSpec
	Farms    []FarmSpec
	Turbines []Turbine
	// Contracts are the farms' resolved contracts by farm id (absent: the
	// default).
	Contracts map[string]*Contract
	// Models are the farms' turbine models by farm id (absent: none).
	Models map[string]*Model
	// Hash is the sha256 of the file's bytes (hex), recorded with the
	// versions an apply writes; empty for a plan built in code.
	Hash string
}

// FarmRules is the rules in force for farm f of the plan.
func (p *Plan) FarmRules(f FarmSpec) Rules { return f.Rules.over(p.Rules) }

// ValidationError lists everything wrong with a fleet file; each problem
// names the field and the value.
type ValidationError struct {
	Source   string
	Problems []string
	// More is how many problems were found past the MaxProblems listed.
	More int
}

func (e *ValidationError) Error() string {
	s := fmt.Sprintf("fleet file %s: %d problem(s):\n  %s", e.Source, len(e.Problems)+e.More, strings.Join(e.Problems, "\n  "))
	if e.More > 0 {
		s += fmt.Sprintf("\n  … and %d more (the first %d are listed)", e.More, len(e.Problems))
	}
	return s
}

// ReadFile parses and validates a fleet file.
func ReadFile(path string) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		return nil, tooLarge(path, fmt.Sprintf("%d bytes", st.Size()))
	}
	return Parse(path, f)
}

// tooLarge is the refusal of a file over MaxFileBytes (size says how large).
func tooLarge(source, size string) error {
	return &ValidationError{Source: source, Problems: []string{fmt.Sprintf(
		"file size: %s; at most %d bytes (%d MiB)", size, MaxFileBytes, MaxFileBytes>>20)}}
}

// Parse reads a fleet file from r and validates it. source names it in
// errors. It reads at most MaxFileBytes and checks the counts of the file's
// node tree before decoding it (docs/operator.md, "Size limits").
func Parse(source string, r io.Reader) (*Plan, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read fleet file %s: %w", source, err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooLarge(source, fmt.Sprintf("more than %d bytes", MaxFileBytes))
	}
	if err := checkTree(source, data); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var file File
	if err := dec.Decode(&file); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ValidationError{Source: source, Problems: []string{"file is empty"}}
		}
		return nil, &ValidationError{Source: source, Problems: []string{err.Error()}}
	}
	plan, err := file.validate(source, &lines{data: data})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	plan.Hash = hex.EncodeToString(sum[:])
	return plan, nil
}

// checkTree parses data as a node tree and refuses it when a count is over
// its limit (checkCounts), before the decoder builds the tree again for
// the File: kept, it would double the peak memory of every parse.
func checkTree(source string, data []byte) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &ValidationError{Source: source, Problems: []string{"file is empty"}}
		}
		return &ValidationError{Source: source, Problems: []string{err.Error()}}
	}
	if len(doc.Content) == 0 {
		return nil
	}
	verr := &ValidationError{Source: source}
	checkCounts(doc.Content[0], func(n *yaml.Node, format string, args ...any) {
		if len(verr.Problems) == MaxProblems {
			verr.More++
			return
		}
		verr.Problems = append(verr.Problems, fmt.Sprintf("line %d: ", n.Line)+fmt.Sprintf(format, args...))
	})
	if len(verr.Problems) > 0 {
		return verr
	}
	return nil
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// shardPattern is what a shard name must look like: it names River's queue
// of the shard's rollups ("rollup_" + name; River accepts lower-case
// letters and digits separated by single underscores or hyphens, at most
// 64 characters) and, in the embedded default, a database.
var shardPattern = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// Validate checks the file on its own (no database) and expands turbines.
func (file *File) Validate(source string) (*Plan, error) { return file.validate(source, nil) }

// validate is Validate; problems name their line when src has the file.
func (file *File) validate(source string, src *lines) (*Plan, error) {
	var problems []string
	more := 0 // problems past the MaxProblems listed
	bad := func(format string, args ...any) {
		if len(problems) == MaxProblems {
			more++
			return
		}
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	// badAt is bad for a problem at path in the file: "line N: " first.
	badAt := func(path []any, format string, args ...any) {
		if len(problems) == MaxProblems {
			more++
			return
		}
		problems = append(problems, src.at(path...)+fmt.Sprintf(format, args...))
	}

	shards := map[string]bool{}
	passwordVars := map[string]string{} // GALEWATCH_SHARD_<NAME>_PASSWORD -> shard
	for i, s := range file.Shards {
		here := []any{"shards", i, "name"}
		if other, ok := passwordVars[PasswordEnv(s.Name)]; ok && other != s.Name && s.Name != "" {
			badAt(here, "shards[%d].name: %s and %s would share the password variable %s; rename one", i, show(s.Name), show(other), PasswordEnv(s.Name))
		}
		passwordVars[PasswordEnv(s.Name)] = s.Name
		switch {
		case s.Name == "":
			badAt(here, "shards[%d].name: missing", i)
		case len(s.Name) > MaxShardName:
			badAt(here, "shards[%d].name: %s is %d characters; at most %d (it names the job queue rollup_<name>)", i, show(s.Name), len(s.Name), MaxShardName)
		case !shardPattern.MatchString(s.Name):
			badAt(here, "shards[%d].name: %s is not a valid shard name (lower-case letters and digits, separated by single _ or -)", i, show(s.Name))
		case shards[s.Name]:
			badAt(here, "shards[%d].name: duplicate shard %s", i, show(s.Name))
		}
		shards[s.Name] = true
		if s.DSN != "" && dsnHasPassword(s.DSN) {
			badAt([]any{"shards", i, "dsn"}, "shards[%d] (%s).dsn: contains a password; the registry stores DSNs where DBAs can read them, so give the password in %s, PGPASSWORD or a pgpass file instead", i, clip(s.Name, 64), PasswordEnv(s.Name))
		}
	}
	if len(file.Shards) == 0 {
		bad("shards: at least one shard is required")
	}

	plan := &Plan{Shards: file.Shards, Rules: file.Rules.over(DefaultRules())}
	plan.Rules.validate("rules", func(format string, args ...any) { badAt([]any{"rules"}, format, args...) })
	plan.Rejects = file.Rules.rejects(DefaultRejectRules())
	plan.Rejects.validate("rules", func(format string, args ...any) { badAt([]any{"rules"}, format, args...) })
	models := map[string]*Model{}
	for i, m := range file.Models {
		at := fmt.Sprintf("models[%d]", i)
		if m.Name != "" {
			at = fmt.Sprintf("models[%d] (%s)", i, clip(m.Name, 64))
		}
		model := m.resolve(at, func(path []any, format string, args ...any) {
			badAt(append([]any{"models", i}, path...), format, args...)
		})
		if models[m.Name] != nil {
			badAt([]any{"models", i, "name"}, "%s.name: duplicate model %s", at, show(m.Name))
		}
		models[m.Name] = model
	}
	farms := map[string]bool{}
	where := map[string]string{} // turbine id -> shard
	full := false                // the file named more than MaxTurbines: expand no more
	for i, f := range file.Farms {
		farmAt := func(path ...any) []any { return append([]any{"farms", i}, path...) }
		at := fmt.Sprintf("farms[%d]", i)
		if f.ID != "" {
			at = fmt.Sprintf("farms[%d] (%s)", i, clip(f.ID, 64))
		}
		switch {
		case f.ID == "":
			badAt(farmAt("id"), "%s.id: missing", at)
		case !idPattern.MatchString(f.ID):
			badAt(farmAt("id"), "%s.id: %s is not a valid id (letters, digits, . _ -)", at, show(f.ID))
		case len(f.ID) > MaxFarmID:
			badAt(farmAt("id"), "%s.id: %s is %d characters; at most %d (River refuses the farm's nightly job id rollup_schedule_<id> at 128)", at, show(f.ID), len(f.ID), MaxFarmID)
		case farms[f.ID]:
			badAt(farmAt("id"), "%s.id: duplicate farm id %s", at, show(f.ID))
		}
		farms[f.ID] = true
		if f.Name == "" {
			f.Name = f.ID
		} else if msg := nameProblem(f.Name); msg != "" {
			badAt(farmAt("name"), "%s.name: %s", at, msg)
		}
		if f.Timezone == "" {
			badAt(farmAt("timezone"), "%s.timezone: missing (an IANA zone such as Europe/London)", at)
		} else if _, err := time.LoadLocation(f.Timezone); err != nil || f.Timezone == "Local" {
			badAt(farmAt("timezone"), "%s.timezone: unknown time zone %s", at, show(f.Timezone))
		}
		if f.CadenceSeconds == 0 {
			f.CadenceSeconds = 2
		} else if f.CadenceSeconds < 0 || f.CadenceSeconds > MaxCadence {
			badAt(farmAt("cadence_seconds"), "%s.cadence_seconds: %d must be between 1 and %d", at, f.CadenceSeconds, MaxCadence)
		}
		if f.Rules != (RulesSpec{}) {
			f.Rules.over(plan.Rules).validate(at+".rules", func(format string, args ...any) { badAt(farmAt("rules"), format, args...) })
			f.Rules.farmOnly(at+".rules", func(format string, args ...any) { badAt(farmAt("rules"), format, args...) })
		}
		if f.Contract != nil {
			c := f.Contract.resolve(f.ID, at+".contract", func(format string, args ...any) { badAt(farmAt("contract"), format, args...) })
			if c.LDPerMWh != "" && f.Model == "" {
				badAt(farmAt("contract"), "%s.contract.ld_per_mwh: the farm has no model: the shortfall in MWh is of the potential energy its power curve gives (give the farm a model, or ld_per_point)", at)
			}
			if plan.Contracts == nil {
				plan.Contracts = map[string]*Contract{}
			}
			plan.Contracts[f.ID] = c
		}
		if f.Model != "" {
			if m := models[f.Model]; m == nil {
				badAt(farmAt("model"), "%s.model: no model %s in models", at, show(f.Model))
			} else {
				if plan.Models == nil {
					plan.Models = map[string]*Model{}
				}
				plan.Models[f.ID] = m
			}
		}
		if len(f.Turbines) == 0 {
			badAt(farmAt("turbines"), "%s.turbines: a farm needs at least one turbine", at)
		}
		for j, ts := range f.Turbines {
			if full {
				break
			}
			tat := fmt.Sprintf("%s.turbines[%d]", at, j)
			entry := func(path ...any) []any { return append(farmAt("turbines", j), path...) }
			ids, field, msg := ts.expand()
			if msg != "" {
				badAt(entry(field), "%s: %s", tat, msg)
				continue
			}
			if ts.Shard == "" {
				badAt(entry("shard"), "%s.shard: missing", tat)
				continue
			}
			if !shards[ts.Shard] {
				badAt(entry("shard"), "%s.shard: unknown shard %s (not under shards:)", tat, show(ts.Shard))
				continue
			}
			cadence := ts.CadenceSeconds
			if cadence == 0 {
				cadence = f.CadenceSeconds
			} else if cadence < 0 || cadence > MaxCadence {
				badAt(entry("cadence_seconds"), "%s.cadence_seconds: %d must be between 1 and %d", tat, cadence, MaxCadence)
				continue
			}
			if len(plan.Turbines)+len(ids) > MaxTurbines {
				badAt(entry(), "%s: the file names more than %d turbines", tat, MaxTurbines)
				full = true
				break
			}
			if ts.CommissionedAt == nil {
				ts.CommissionedAt = f.CommissionedAt
			}
			if ts.CommissionedAt != nil && ts.DecommissionedAt != nil && !ts.DecommissionedAt.After(*ts.CommissionedAt) {
				badAt(entry("decommissioned_at"), "%s.decommissioned_at: %s is not after commissioned_at %s", tat,
					ts.DecommissionedAt.Format(time.RFC3339), ts.CommissionedAt.Format(time.RFC3339))
				continue
			}
			for _, id := range ids {
				if prev, seen := where[id]; seen {
					if prev != ts.Shard {
						badAt(entry(), "%s: turbine %q is on two shards (%s and %s)", tat, id, prev, ts.Shard)
					} else {
						badAt(entry(), "%s: duplicate turbine id %q", tat, id)
					}
					continue
				}
				where[id] = ts.Shard
				plan.Turbines = append(plan.Turbines, Turbine{
					ID: id, FarmID: f.ID, Shard: ts.Shard, CadenceSeconds: cadence,
					CommissionedAt: ts.CommissionedAt, DecommissionedAt: ts.DecommissionedAt,
				})
			}
		}
		plan.Farms = append(plan.Farms, f)
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Source: source, Problems: problems, More: more}
	}
	return plan, nil
}

// dsnHasPassword reports whether a connection string (URL or key=value)
// carries a password. A DSN that does not parse is left to the connection
// attempt to report.
func dsnHasPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return strings.Contains(dsn, "password=")
		}
		if _, ok := u.User.Password(); ok {
			return true
		}
		return u.Query().Has("password")
	}
	for _, f := range strings.Fields(dsn) {
		if strings.HasPrefix(strings.TrimSpace(f), "password") {
			return true
		}
	}
	return false
}

// PasswordEnv is the environment variable that holds a shard's password
// (GALEWATCH_SHARD_S1_PASSWORD for shard s1).
func PasswordEnv(shard string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(shard) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "GALEWATCH_SHARD_" + b.String() + "_PASSWORD"
}

// expand returns the ids a turbine entry names, or the field at fault and
// what is wrong with it.
func (ts TurbineSpec) expand() (ids []string, field, problem string) {
	if ts.ID != "" {
		if ts.Prefix != "" || ts.From != 0 || ts.To != 0 {
			return nil, "id", fmt.Sprintf("id %s: give either id or prefix/from/to, not both", show(ts.ID))
		}
		if !idPattern.MatchString(ts.ID) {
			return nil, "id", fmt.Sprintf("id: %s is not a valid turbine id", show(ts.ID))
		}
		if len(ts.ID) > MaxTurbineID {
			return nil, "id", fmt.Sprintf("id: %s is %d characters; at most %d", show(ts.ID), len(ts.ID), MaxTurbineID)
		}
		return []string{ts.ID}, "", ""
	}
	if ts.Prefix == "" {
		return nil, "id", "id: missing (give id, or prefix with from and to)"
	}
	if ts.From < 0 || ts.To < ts.From {
		return nil, "from", fmt.Sprintf("from/to: range %d..%d is empty or negative", ts.From, ts.To)
	}
	if ts.To-ts.From >= MaxRange {
		return nil, "to", fmt.Sprintf("from/to: range %d..%d names more than %d turbines", ts.From, ts.To, MaxRange)
	}
	digits := ts.Digits
	if digits == 0 {
		digits = 3
	}
	if digits < 0 || digits > 12 {
		return nil, "digits", fmt.Sprintf("digits: %d is out of range 1..12", ts.Digits)
	}
	// The longest id is the last one (numbers are zero-padded to digits and
	// grow with the range): checked before a long prefix is copied 100,000
	// times.
	if last := fmt.Sprintf("%s%0*d", ts.Prefix, digits, ts.To); len(last) > MaxTurbineID {
		return nil, "prefix", fmt.Sprintf("prefix: %s makes turbine ids of up to %d characters (%s); at most %d", show(ts.Prefix), len(last), show(last), MaxTurbineID)
	}
	ids = make([]string, 0, ts.To-ts.From+1)
	// Counted by offset: n++ up to To would wrap at the largest int.
	for i := 0; i <= ts.To-ts.From; i++ {
		id := fmt.Sprintf("%s%0*d", ts.Prefix, digits, ts.From+i)
		if !idPattern.MatchString(id) {
			return nil, "prefix", fmt.Sprintf("prefix: %s makes invalid turbine id %s", show(ts.Prefix), show(id))
		}
		ids = append(ids, id)
	}
	return ids, "", ""
}
