// Command dump writes the schema the migrations leave, one file per kind of
// database: sql/schema/control.sql (control migrations and River's) and
// sql/schema/shard.sql. With -check it writes nothing and fails when the
// files differ from what the migrations give (make verify).
//
// It migrates two scratch databases on DATABASE_URL's server, else on an
// embedded cluster of its own in .galewatch/schema (stopped when done),
// dumps them with that server's pg_dump and drops them.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/galewatch/galewatch/internal/schema"
)

func main() {
	dir := flag.String("dir", "sql/schema", "folder of control.sql and shard.sql")
	check := flag.Bool("check", false, "write nothing; fail when a file differs from the migrations' schema")
	home := flag.String("home", ".galewatch/schema", "embedded cluster folder, when DATABASE_URL is unset")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dumps, err := schema.DumpAll(ctx, os.Getenv("DATABASE_URL"), *home)
	if err != nil {
		fail(err)
	}
	stale := 0
	for _, d := range dumps {
		path := filepath.Join(*dir, d.Kind+".sql")
		if *check {
			have, err := os.ReadFile(path)
			if err != nil || string(have) != d.SQL {
				fmt.Fprintf(os.Stderr, "%s is not the schema sql/migrations/%s gives: run make schema and commit it\n", path, d.Kind)
				stale++
			}
			continue
		}
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(path, []byte(d.SQL), 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("wrote %s\n", path)
	}
	if stale > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "schema dump: %v\n", err)
	os.Exit(1)
}
