package pgserver

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/galewatch/galewatch/internal/db/controldb"
)

// ControlDatabase is the control database's name in the embedded default.
const ControlDatabase = "galewatch"

// DefaultHome is the embedded cluster's folder: $GALEWATCH_HOME, else ./.galewatch.
func DefaultHome() string {
	if h := os.Getenv("GALEWATCH_HOME"); h != "" {
		return h
	}
	return ".galewatch"
}

// WithDatabase returns dsn pointing at database name on the same server.
// Both URL and key=value connection strings are understood.
func WithDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("parse connection string: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	var parts []string
	for _, f := range strings.Fields(dsn) {
		if !strings.HasPrefix(f, "dbname=") {
			parts = append(parts, f)
		}
	}
	return strings.Join(append(parts, "dbname="+name), " "), nil
}

// DatabaseName returns the database a connection string points at.
func DatabaseName(dsn string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	return cfg.Database, nil
}

// EnsureDatabase creates database name on the server behind maintenanceDSN if
// it does not exist. Concurrent callers are fine: "already exists" is success.
//
// CREATE/DROP DATABASE are the one place Go builds SQL text: utility
// statements take no parameters, so sqlc cannot express them. The name is
// quoted with pgx.Identifier.
func EnsureDatabase(ctx context.Context, maintenanceDSN, name string) error {
	conn, err := pgx.Connect(ctx, maintenanceDSN)
	if err != nil {
		return fmt.Errorf("connect to create database %q: %w", name, err)
	}
	defer conn.Close(ctx)
	present, err := controldb.New(conn).DatabaseExists(ctx, name)
	if err != nil {
		return err
	}
	if present {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		if strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

// DropDatabase drops database name, disconnecting its sessions. Used by tests.
func DropDatabase(ctx context.Context, maintenanceDSN, name string) error {
	conn, err := pgx.Connect(ctx, maintenanceDSN)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}
