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

// MaxCurveWind is the highest wind a curve may name (m/s): the shard samples
// curves up to it (model_curve_lut).
const MaxCurveWind = 30

// resolve validates a model entry (problems through bad, at names it).
func (s *ModelSpec) resolve(at string, bad func(format string, args ...any)) *Model {
	m := &Model{Name: s.Name}
	if s.Name == "" {
		bad("%s.name: missing", at)
	} else if msg := nameProblem(s.Name); msg != "" {
		bad("%s.name: %s", at, msg)
	}
	if len(s.Curve) < 2 {
		bad("%s.curve: at least two points [wind m/s, kW] are needed", at)
		return m
	}
	for i, p := range s.Curve {
		w, kw := p[0], p[1]
		switch {
		case math.IsNaN(w) || w < 0 || w > MaxCurveWind:
			bad("%s.curve[%d]: wind %v m/s must be between 0 and %d", at, i, w, MaxCurveWind)
		case i > 0 && w <= s.Curve[i-1][0]:
			bad("%s.curve[%d]: wind %v m/s must be above the point before (%v m/s)", at, i, w, s.Curve[i-1][0])
		case math.IsNaN(kw) || kw < 0 || kw > 100_000:
			bad("%s.curve[%d]: power %v kW must be between 0 and 100000", at, i, kw)
		}
		m.WindMS = append(m.WindMS, float32(w))
		m.PowerKW = append(m.PowerKW, float32(kw))
	}
	return m
}
