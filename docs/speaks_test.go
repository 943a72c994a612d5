package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideReferences are the ways a file could lean on a document a reader
// of this repository does not have: the design notes it was started from
// (numbered seed documents, their folder, "the seed story") or a tracker's
// issue and pull-request numbers. A random seed ("seed 42", --seed), the
// fuzz seed corpus and a third party's issue by URL or owner/repo#N
// (golang/go#75804) are not matched: the reader can follow those.
var outsideReferences = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`(?i)seeds?[ _-]?#?0\d\d`), "a seed document by number"},
	{regexp.MustCompile(`(?i)\bseeds/`), "the seed documents' folder"},
	{regexp.MustCompile(`(?i)\b[0-9]{3}_[0-9a-f]{16}\.txt\b`), "a seed document's file"},
	{regexp.MustCompile(`(?i)\bseed (story|stories|fleet|documents?|docs?|model|brief)\b`), "the seed documents' story, fleet or figures"},
	{regexp.MustCompile(`(?i)\bthe seed's\b`), "the seed documents' story, fleet or figures"},
	{regexp.MustCompile(`(?i)\b(source|original) (story|brief)\b`), "the story the project was started from"},
	{regexp.MustCompile(`(?i)\bissues? ?#?\d+`), "an issue number"},
	{regexp.MustCompile(`(?i)\b(PR|pull request) ?#\d+`), "a pull request number"},
}

// thisFile holds the patterns above, so it is the one file not searched.
const thisFile = "docs/speaks_test.go"

// TestRepositorySpeaksForItself: no file of the repository (tracked, or new
// and not ignored) cites a seed document or an issue number. A fact keeps
// its source in words a reader can check here (the demo fleet is
// fleet/demo.yaml; the design peak is 900 million readings a day with a
// peak hour three times the average), never a document they do not have.
func TestRepositorySpeaksForItself(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "--cached", "--others", "--exclude-standard", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v (the check reads the files git lists)", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 200 {
		t.Fatalf("git lists %d files; want the repository's several hundred", len(files))
	}
	read := 0
	for _, f := range files {
		if f == thisFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join("..", f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		read++
		for _, r := range outsideReferences {
			if m := r.re.FindString(f); m != "" {
				t.Errorf("%s: its name %q cites %s, which a reader of this repository does not have: name it for what it holds", f, m, r.why)
			}
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, r := range outsideReferences {
				if m := r.re.FindString(line); m != "" {
					t.Errorf("%s:%d: %q cites %s, which a reader of this repository does not have: say what it is and where it comes from in words they can check", f, i+1, m, r.why)
				}
			}
		}
	}
	if read < 200 {
		t.Fatalf("read %d text files; want the repository's several hundred", read)
	}
}
