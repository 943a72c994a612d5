// Package shard embeds the migrations applied to every shard database
// (readings and dirty marks).
package shard

import "embed"

// FS holds the goose migration files of a shard database.
//
//go:embed *.sql
var FS embed.FS
