package simulate_test

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/galewatch/galewatch/internal/fleet"
	"github.com/galewatch/galewatch/internal/reading"
	"github.com/galewatch/galewatch/internal/simulate"
)

// Streaming a run straight into an encoder: the reused Reading goes to
// Encode, which copies it into its buffer.
func ExampleGenerate() {
	plan, err := fleet.ReadFile("../../fleet/demo.yaml")
	if err != nil {
		panic(err)
	}
	cfg, err := simulate.Scenario("ardnave-saturday", plan, "day", 1)
	if err != nil {
		panic(err)
	}
	enc := reading.NewEncoder(reading.NDJSON, os.Stdout)
	errEnough := errors.New("enough")
	n := 0
	_, err = simulate.Generate(cfg, func(r *reading.Reading) error {
		if n++; n > 3 {
			return errEnough
		}
		return enc.Encode(r)
	})
	enc.Flush()
	fmt.Println(errors.Is(err, errEnough), cfg.From.Format(time.RFC3339))
	// Output:
	// {"turbine_id":"AP-001","recorded_at":"2026-07-31T23:00:00Z","received_at":"2026-07-31T23:00:04.690119Z","available":true,"power_kw":1592.4,"wind_ms":9.2}
	// {"turbine_id":"AP-002","recorded_at":"2026-07-31T23:00:00Z","received_at":"2026-07-31T23:00:02.337054Z","available":true,"power_kw":2781.1,"wind_ms":11.03}
	// {"turbine_id":"AP-003","recorded_at":"2026-07-31T23:00:00Z","received_at":"2026-07-31T23:00:04.968654Z","available":true,"power_kw":3317,"wind_ms":11.68}
	// true 2026-08-01T00:00:00+01:00
}
