// Command sweep drops the databases finished tests left marked done on the
// test server (DATABASE_URL, else the embedded cluster when it is running).
// `make test` runs it when the tests end.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/galewatch/galewatch/internal/pgserver"
	"github.com/galewatch/galewatch/internal/testdb"
)

func main() {
	ctx := context.Background()
	maint := ""
	if dsn := os.Getenv("DATABASE_URL"); dsn != "" {
		m, err := pgserver.WithDatabase(dsn, "postgres")
		if err != nil {
			fail(err)
		}
		maint = m
	} else {
		home := os.Getenv("GALEWATCH_HOME")
		if home == "" {
			home = ".galewatch"
		}
		s := pgserver.New(home)
		st, err := s.Status(ctx)
		if err != nil || !st.Running {
			return // nothing to sweep on a stopped cluster: the next test run does it
		}
		maint = s.URL("postgres")
	}
	n, err := testdb.Sweep(ctx, maint)
	if err != nil {
		fail(err)
	}
	if n > 0 {
		fmt.Printf("testdb: dropped %d finished test database(s)\n", n)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testdb sweep:", err)
	os.Exit(1)
}
