// Package reports embeds the report SQL files that DBAs run with psql, so
// that the orchestrator runs the very same text (internal/report).
package reports

import _ "embed"

// MonthlyAvailability is monthly_availability.sql, as psql runs it.
//
//go:embed monthly_availability.sql
var MonthlyAvailability string

// ContractYear is contract_year.sql, as psql runs it.
//
//go:embed contract_year.sql
var ContractYear string
