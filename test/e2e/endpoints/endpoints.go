// Package endpoints is what the e2e suite's stranger pod must get from each of Prism's
// endpoints (docs/security.md, "Endpoints"), and the reading of its probe's log
// (hack/e2e/sleep probe), apart from the cluster so that `make test` checks the comparison.
package endpoints

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
)

// The tokens the stranger pod sends: none, its own ServiceAccount's (no Prism role), and the two
// Prism hands out, copied into a Secret of the stranger's namespace.
const (
	TokenNone    = "-"
	TokenOwn     = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	TokenScraper = "/prism-tokens/scraper" // prism-metrics-scraper: ClusterRole prism-metrics-reader
	TokenReader  = "/prism-tokens/reader"  // prism-endurance-reader: get storagenodes
)

// Tokens is every token each URL is tried with, in the probe's order.
var Tokens = []string{TokenNone, TokenOwn, TokenScraper, TokenReader}

// Case is one URL of a Prism endpoint and what each token must get from it: the status, and
// for a token let through, a piece of the answer.
type Case struct {
	What, URL string
	Want      map[string]int
	Body      string // in the answer of a token that gets neither 401 nor 403
}

// Cases: docs/security.md's table. Metrics (every operator replica, the agent): the scraper
// only. The page and its proxy: the reader only; the proxy still refuses its caller's PromQL
// (400), and answers a named query with Prometheus' answer when prometheus (the suite's runs
// behind it) or 502 when none listens.
func Cases(operatorMetrics []string, agentMetrics, page string, prometheus bool) []Case {
	metrics := map[string]int{TokenNone: 401, TokenOwn: 403, TokenScraper: 200, TokenReader: 403}
	var out []Case
	for _, u := range operatorMetrics {
		out = append(out, Case{"operator metrics", u, metrics, "# HELP"})
	}
	out = append(out, Case{"agent metrics", agentMetrics, metrics, "# HELP"})
	pageOnly := func(reader int) map[string]int {
		return map[string]int{TokenNone: 401, TokenOwn: 403, TokenScraper: 403, TokenReader: reader}
	}
	named := Case{"page's named query", page + "/api/query?name=fleet_devices", pageOnly(502), "Prometheus did not answer"}
	if prometheus {
		named.Want, named.Body = pageOnly(200), `"status":"success"`
	}
	return append(out,
		Case{"endurance page", page + "/", pageOnly(200), "<!doctype html>"},
		named,
		Case{"PromQL through the page", page + "/api/query?query=up", pageOnly(400), "arbitrary PromQL is not answered"})
}

// Args is the probe's command line for cases: every URL with every token.
func Args(cases []Case) []string {
	args := []string{"probe"}
	for _, c := range cases {
		for _, token := range Tokens {
			args = append(args, token, c.URL)
		}
	}
	return args
}

// Result is one line of `sleep probe` (hack/e2e/sleep/probe.go).
type Result struct {
	Token  string `json:"token"`
	URL    string `json:"url"`
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

// Parse reads the probe pod's log: its "probe: {json}" lines by token and URL.
func Parse(log string) (map[[2]string]Result, error) {
	out := map[[2]string]Result{}
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "probe: ")
		if !ok {
			continue
		}
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("probe line %q: %w", line, err)
		}
		out[[2]string{r.Token, r.URL}] = r
	}
	return out, sc.Err()
}

// Mismatches compares the probe's answers with the cases: one line per token and URL that got
// another status, no answer, or an answer without the expected piece.
func Mismatches(cases []Case, got map[[2]string]Result) []string {
	var out []string
	for _, c := range cases {
		for _, token := range Tokens {
			want := c.Want[token]
			r, ok := got[[2]string{token, c.URL}]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s %s, token %s: no answer in the probe's log", c.What, c.URL, token))
			case r.Error != "" || r.Status != want:
				out = append(out, fmt.Sprintf("%s %s, token %s: got %d %q (error %q), want %d", c.What, c.URL, token, r.Status, r.Body, r.Error, want))
			case want != 401 && want != 403 && !strings.Contains(strings.ToLower(r.Body), strings.ToLower(c.Body)):
				out = append(out, fmt.Sprintf("%s %s, token %s: %d but %q lacks %q", c.What, c.URL, token, r.Status, r.Body, c.Body))
			}
		}
	}
	return out
}
