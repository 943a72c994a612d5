package schema

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/galewatch/galewatch/internal/pgserver"
)

// A KindDump is the schema of one kind of database: "control" or "shard".
type KindDump struct {
	Kind string
	SQL  string
}

// DumpAll migrates a scratch database of each kind, dumps it (Dump) under a
// header saying where it comes from, and drops it. The server is
// databaseURL's when it is set, else an embedded cluster in home, started
// for this and stopped after.
func DumpAll(ctx context.Context, databaseURL, home string) (dumps []KindDump, err error) {
	maint, bin := "", ""
	if databaseURL != "" {
		if maint, err = pgserver.WithDatabase(databaseURL, "postgres"); err != nil {
			return nil, err
		}
		if bin, err = pgserver.FindBinDir(os.Getenv("PG_BINDIR")); err != nil {
			return nil, err
		}
	} else {
		srv := pgserver.New(home)
		if err := srv.Up(ctx); err != nil {
			return nil, err
		}
		defer func() {
			if derr := srv.Down(context.WithoutCancel(ctx)); err == nil && derr != nil {
				err = derr
			}
		}()
		st, err := srv.Status(ctx)
		if err != nil {
			return nil, err
		}
		maint, bin = srv.URL("postgres"), st.BinDir
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	for _, kind := range []string{"control", "shard"} {
		name := "galewatch_schema_" + kind + "_" + hex.EncodeToString(suffix)
		sql, err := dumpKind(ctx, maint, bin, kind, name)
		if err != nil {
			return nil, fmt.Errorf("%s schema: %w", kind, err)
		}
		dumps = append(dumps, KindDump{Kind: kind, SQL: sql})
	}
	return dumps, nil
}

func dumpKind(ctx context.Context, maint, bin, kind, name string) (string, error) {
	if err := pgserver.EnsureDatabase(ctx, maint, name); err != nil {
		return "", err
	}
	defer func() { _ = pgserver.DropDatabase(context.WithoutCancel(ctx), maint, name) }()
	dsn, err := pgserver.WithDatabase(maint, name)
	if err != nil {
		return "", err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return "", err
	}
	from := "sql/migrations/control and River's migrations"
	if kind == "control" {
		_, err = MigrateControl(ctx, pool)
	} else {
		from = "sql/migrations/shard"
		_, err = MigrateShard(ctx, pool)
	}
	pool.Close()
	if err != nil {
		return "", err
	}
	dump, err := Dump(ctx, bin, dsn)
	if err != nil {
		return "", err
	}
	header := "-- The " + kind + " database's schema as " + from + " leave it:\n" +
		"-- pg_dump --schema-only, normalised. Written by `make schema`; do not edit.\n" +
		"-- `make verify` fails when it differs from what the migrations give.\n\n"
	return header + dump, nil
}

// Dump returns the schema of the database at dsn as pg_dump --schema-only
// writes it (tables, views, functions, indexes, comments, grants; no
// owners: they name whoever migrated), normalised so that two dumps of the
// same migrations are equal byte for byte. binDir holds pg_dump, of the
// server's major version.
func Dump(ctx context.Context, binDir, dsn string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "pg_dump"), "--schema-only", "--no-owner", "--no-tablespaces", "--dbname", dsn)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("pg_dump: %w: %s", err, strings.TrimSpace(errOut.String()))
	}
	return Normalise(out.String()), nil
}

// Normalise drops what differs between two dumps of one schema — the
// versions of server and pg_dump, the session settings pg_dump restores
// with, \restrict's random key — and what says nothing (the banner, the
// owner placeholder, runs of blank lines).
func Normalise(dump string) string {
	var b strings.Builder
	blank := true // no blank line at the top
	for _, line := range strings.Split(dump, "\n") {
		switch {
		case strings.HasPrefix(line, "-- Dumped from"), strings.HasPrefix(line, "-- Dumped by"),
			strings.HasPrefix(line, "-- PostgreSQL database dump"),
			strings.HasPrefix(line, `\restrict`), strings.HasPrefix(line, `\unrestrict`),
			strings.HasPrefix(line, "SET "), strings.HasPrefix(line, "SELECT pg_catalog.set_config("):
			continue
		case strings.TrimSpace(line) == "" || strings.TrimSpace(line) == "--":
			if !blank {
				b.WriteString("\n")
			}
			blank = true
			continue
		}
		b.WriteString(strings.TrimSuffix(line, "; Owner: -")) // --no-owner's placeholder
		b.WriteString("\n")
		blank = false
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
