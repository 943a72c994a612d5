// Package alerts holds the Prometheus alerting rules for serve's /metrics;
// promtool checks and unit-tests them (make verify), this test keeps them
// on metrics and labels that exist.
package alerts

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Annotations map[string]string `yaml:"annotations"`
}

// Labels every scraped series has besides its own (Prometheus adds them).
var targetLabels = []string{"instance", "job"}

// TestRulesUseMetricsThatExist: every galewatch_* name a rule's expression
// reads is registered in internal/metrics, every $labels.X its annotations
// print is a label of one of those metrics (or the target's), every rule
// waits (for:) and has a summary, and every alert is tested both firing
// and quiet in galewatch.rules.test.yml.
func TestRulesUseMetricsThatExist(t *testing.T) {
	var file struct {
		Groups []struct {
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	b, err := os.ReadFile("galewatch.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	metrics := registered(t)
	tests, err := os.ReadFile("galewatch.rules.test.yml")
	if err != nil {
		t.Fatal(err)
	}

	var n int
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			n++
			labels := slices.Clone(targetLabels)
			names := regexp.MustCompile(`\bgalewatch_[a-z_]+\b`).FindAllString(r.Expr, -1)
			if len(names) == 0 {
				t.Errorf("%s: its expression reads no galewatch_ metric", r.Alert)
			}
			for _, name := range names {
				l, ok := metrics[name]
				if !ok {
					t.Errorf("%s: %s is not a metric internal/metrics registers", r.Alert, name)
				}
				labels = append(labels, l...)
			}
			for _, m := range regexp.MustCompile(`\$labels\.(\w+)`).FindAllStringSubmatch(r.Annotations["summary"]+r.Annotations["description"], -1) {
				if !slices.Contains(labels, m[1]) {
					t.Errorf("%s: prints $labels.%s, which none of %v has", r.Alert, m[1], names)
				}
			}
			if r.For == "" {
				t.Errorf("%s: no for:", r.Alert)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			fires := regexp.MustCompile(`alertname: ` + r.Alert + `\n\s+exp_alerts:\n\s+- exp_labels`).Match(tests)
			quiet := regexp.MustCompile(`alertname: ` + r.Alert + `\n\s+exp_alerts: \[\]`).Match(tests)
			if !fires || !quiet {
				t.Errorf("%s: tested firing %v, tested quiet %v; want both", r.Alert, fires, quiet)
			}
		}
	}
	if n != 14 {
		t.Errorf("found %d rules; want 14", n)
	}
}

// registered reads the metric names internal/metrics registers, with their
// labels: prometheus.NewDesc(name, help, labels, …) and CounterOpts /
// HistogramOpts{Name, Help}, labels.
func registered(t *testing.T) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob("../internal/metrics/*.go")
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	const help = `"(?:[^"\\]|\\.)*"`
	desc := regexp.MustCompile(`NewDesc\("(\w+)",\s*` + help + `,\s*(?:nil|\[\]string\{([^}]*)\})`)
	opts := regexp.MustCompile(`Name:\s*"(\w+)",\s*Help:\s*` + help + `,(?:\s*Buckets:[^\n]*)?\s*\}(?:, \[\]string\{([^}]*)\})?`)
	metrics := map[string][]string{}
	for _, re := range []*regexp.Regexp{desc, opts} {
		for _, m := range re.FindAllStringSubmatch(src.String(), -1) {
			var labels []string
			for _, l := range strings.Split(m[2], ",") {
				if l = strings.Trim(strings.TrimSpace(l), `"`); l != "" {
					labels = append(labels, l)
				}
			}
			metrics[m[1]] = labels
		}
	}
	// The scrape-time gauges and the counters, at least as many as today.
	if len(metrics) < 21 {
		t.Fatalf("read %d metrics from internal/metrics; want at least 21 (has its style changed?)", len(metrics))
	}
	return metrics
}
