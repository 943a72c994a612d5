package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// psqlVariable is psql's quoted interpolation, :'name'.
var psqlVariable = regexp.MustCompile(`:'([A-Za-z_][A-Za-z0-9_]*)'`)

// Statement turns a psql script of the shape the files in sql/reports keep
// to into one statement for the extended protocol, so that the orchestrator
// runs the text a DBA runs with psql rather than a copy of it:
//
//   - lines that are psql meta-commands (starting with a backslash: \set,
//     \if, ...) and whole-line -- comments are dropped;
//   - each :'name' becomes $n, n being name's position in vars (psql would
//     substitute the variable as a quoted literal; a parameter is the same
//     value, never spliced into the text);
//   - the trailing semicolon goes.
//
// It refuses a variable it was not given, a given one the script does not
// use, and a script with more than one statement. It is not a psql parser:
// variables only as :'name', and no semicolon but the last one outside
// whole-line comments.
func Statement(script string, vars ...string) (string, error) {
	var kept []string
	for _, line := range strings.Split(script, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, `\`) || strings.HasPrefix(t, "--") {
			continue
		}
		kept = append(kept, line)
	}
	text := strings.TrimSpace(strings.Join(kept, "\n"))
	text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
	if text == "" {
		return "", fmt.Errorf("report script: no statement")
	}
	if strings.Contains(text, ";") {
		return "", fmt.Errorf("report script: more than one statement (a ';' before the end)")
	}
	position := map[string]int{}
	for i, v := range vars {
		position[v] = i + 1
	}
	used := map[string]bool{}
	var unknown []string
	text = psqlVariable.ReplaceAllStringFunc(text, func(m string) string {
		name := psqlVariable.FindStringSubmatch(m)[1]
		n, ok := position[name]
		if !ok {
			unknown = append(unknown, name)
			return m
		}
		used[name] = true
		return "$" + strconv.Itoa(n)
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("report script: psql variable(s) %s not bound", strings.Join(unknown, ", "))
	}
	for _, v := range vars {
		if !used[v] {
			return "", fmt.Errorf("report script: psql variable %s is never used", v)
		}
	}
	return text, nil
}
