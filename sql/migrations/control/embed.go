// Package control embeds the control database migrations (fleet registry,
// rollups, rejects). River's own tables are applied by rivermigrate.
package control

import "embed"

// FS holds the goose migration files of the control database.
//
//go:embed *.sql
var FS embed.FS
