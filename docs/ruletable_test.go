// Package docs holds the documentation; its tests keep design.md's
// "Where each rule lives" table true and the repository free of citations
// a reader cannot follow (speaks_test.go).
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRuleTableNamesExist: every name design.md's "Where each rule lives"
// table cites exists where its form says — a path in the repository, a Go
// name (pkg.Name, or Test…) in its package, a query in sql/queries, an SQL
// object (snake_case, table.column, function()) in sql/schema — and none
// is a migration number (a definition moves; its object keeps its name).
func TestRuleTableNamesExist(t *testing.T) {
	design, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(design)
	start := strings.Index(text, "## Where each rule lives")
	if start < 0 {
		t.Fatal(`design.md has no "## Where each rule lives" section`)
	}
	table := text[start:]
	if end := strings.Index(table[3:], "\n## "); end >= 0 {
		table = table[:end+3]
	}
	var goSrc, queries, schema strings.Builder
	read := func(b *strings.Builder, glob string) {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			c, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(c)
		}
	}
	for _, g := range []string{"../internal/*/*.go", "../internal/*/*/*.go", "../cmd/*/*.go"} {
		read(&goSrc, g)
	}
	read(&queries, "../sql/queries/*/*.sql")
	read(&schema, "../sql/schema/*.sql")

	if m := regexp.MustCompile(`\b(?:migration|migrations) \d{3,}|\b000\d\d\b`).FindString(table); m != "" {
		t.Errorf("the table cites a migration number (%q): cite the object instead", m)
	}
	names := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(table, -1)
	if len(names) < 40 {
		t.Fatalf("found %d names in the table; want the table's ~60", len(names))
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$`)
	for _, m := range names {
		name := m[1]
		bare := strings.TrimSuffix(regexp.MustCompile(`\(.*\)$`).ReplaceAllString(name, ""), "()")
		var ok bool
		switch {
		case strings.Contains(bare, "/"):
			_, err := os.Stat(filepath.Join("..", bare))
			ok = err == nil
		case regexp.MustCompile(`^[a-z]+\.[A-Z]\w*$`).MatchString(bare): // pkg.Name
			pkg, ident, _ := strings.Cut(bare, ".")
			var src strings.Builder
			read(&src, "../internal/"+pkg+"/*.go")
			ok = regexp.MustCompile(`(?m)^(func|type|var|const)?\s*(\([^)]*\)\s*)?` + ident + `\b`).MatchString(src.String())
		case strings.HasPrefix(bare, "Test"):
			ok = strings.Contains(goSrc.String(), "func "+bare+"(")
		case regexp.MustCompile(`^[A-Z]\w+$`).MatchString(bare): // a query
			ok = strings.Contains(queries.String(), "-- name: "+bare+" ")
		case snake.MatchString(bare):
			ok = true
			for _, part := range strings.Split(bare, ".") {
				ok = ok && regexp.MustCompile(`\b`+part+`\b`).MatchString(schema.String())
			}
		default:
			continue // prose in backticks (a flag, a file's key): not a name to look up
		}
		if !ok {
			t.Errorf("design.md's rule table cites %q, which does not exist", name)
		}
	}
}
