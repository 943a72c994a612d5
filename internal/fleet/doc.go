// Package fleet is the registry of shards, farms and turbines: the fleet
// file format, its validation, applying it to the control database, and the
// set of shard connections built from it.
//
// One package, its files by job. The three jobs share one type each way
// (a Plan is what the registry versions and what names the shards the
// connections open; the Registry applies Plans and opens the pools), so
// a package apiece would only move those types behind imports:
//
//   - the file and its validation: file.go (parse), rules.go (the rules
//     that define a count), limits.go (sizes and bounds), contract.go and
//     model.go (contracts and power curves);
//   - the registry: plan.go (what an apply would change), apply.go,
//     versions.go (effective-dated farm versions), history.go, moves.go
//     (turbines between shards, the apply lock), repoint.go (a shard the
//     registry knows elsewhere), rollup_range.go (the days a farm may
//     recompute);
//   - the shard connections: shards.go, redact.go (errors that name a
//     database, never its DSN).
package fleet
