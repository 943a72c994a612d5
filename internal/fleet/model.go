package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// ModelSpec is a turbine model in the fleet file (models:): its name and
// power curve, points of [wind m/s, kW] with ascending wind.
type ModelSpec struct {
	Name  string       `yaml:"name"`
	Curve [][2]float64 `yaml:"curve"`
}

// Model is a validated model in its canonical form (turbine_model).
type Model struct {
	Name    string    `json:"name"`
	WindMS  []float32 `json:"wind_ms"`
	PowerKW []float32 `json:"power_kw"`
}

// Hash is the sha256 of the canonical form (hex).
func (m *Model) Hash() string {
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (m *Model) params() controldb.ModelEnsureParams {
	return controldb.ModelEnsureParams{Hash: m.Hash(), Name: m.Name, WindMs: m.WindMS, PowerKw: m.PowerKW}
}

// MaxCurveWind is the highest wind a curve may name (m/s), and CurveStep
// the step the shard samples curves at up to it (model_curve_lut): two
// points closer than a step would share a sample (and as real, the column
// type, 10 and 10.0000001 are one wind: a division by zero).
const (
	MaxCurveWind = 30
	CurveStep    = 0.01
)

// resolve validates a model entry (problems through bad, with the path of
// the value under the entry; at names the entry).
func (s *ModelSpec) resolve(at string, bad func(path []any, format string, args ...any)) *Model {
	m := &Model{Name: s.Name}
	if s.Name == "" {
		bad([]any{"name"}, "%s.name: missing", at)
	} else if msg := nameProblem(s.Name); msg != "" {
		bad([]any{"name"}, "%s.name: %s", at, msg)
	}
	if len(s.Curve) < 2 {
		bad([]any{"curve"}, "%s.curve: at least two points [wind m/s, kW] are needed", at)
		return m
	}
	if len(s.Curve) > MaxCurvePoints {
		bad([]any{"curve"}, "%s.curve: %d points; at most %d", at, len(s.Curve), MaxCurvePoints)
		return m
	}
	for i, p := range s.Curve {
		w, kw := p[0], p[1]
		point := []any{"curve", i}
		switch {
		case math.IsNaN(w) || w < 0 || w > MaxCurveWind:
			bad(point, "%s.curve[%d]: wind %v m/s must be between 0 and %d", at, i, w, MaxCurveWind)
		case i > 0 && w <= s.Curve[i-1][0]:
			bad(point, "%s.curve[%d]: wind %v m/s must be above the point before (%v m/s)", at, i, w, s.Curve[i-1][0])
		// A point on the 0.01 grid minus its neighbour can fall short of
		// 0.01 by a rounding error (3.03 - 3.02): 1e-9 forgives it.
		case i > 0 && w-s.Curve[i-1][0] < CurveStep-1e-9:
			bad(point, "%s.curve[%d]: wind %v m/s is closer than %v m/s to the point before (%v m/s); the curve is sampled every %v m/s",
				at, i, w, CurveStep, s.Curve[i-1][0], CurveStep)
		case math.IsNaN(kw) || kw < 0 || kw > MaxPowerKW:
			bad(point, "%s.curve[%d]: power %v kW must be between 0 and 100000", at, i, kw)
		}
		m.WindMS = append(m.WindMS, float32(w))
		m.PowerKW = append(m.PowerKW, float32(kw))
	}
	return m
}
