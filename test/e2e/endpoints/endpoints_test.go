package endpoints

import (
	"encoding/json"
	"strings"
	"testing"
)

// logOf is the probe log of answers: one "probe: {json}" line each, as hack/e2e/sleep prints.
func logOf(t *testing.T, rs []Result) string {
	var b strings.Builder
	b.WriteString("unrelated line\n")
	for _, r := range rs {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("probe: " + string(j) + "\n")
	}
	return b.String()
}

// asDocumented is what each case wants, as the probe would print it.
func asDocumented(cases []Case) []Result {
	var out []Result
	for _, c := range cases {
		for _, token := range Tokens {
			r := Result{Token: token, URL: c.URL, Status: c.Want[token], Body: "Unauthorized"}
			if r.Status != 401 && r.Status != 403 {
				r.Body = "xx " + strings.ToUpper(c.Body) + " xx"
			}
			out = append(out, r)
		}
	}
	return out
}

// TestMismatches: the answers docs/security.md gives pass; each way a stranger could get
// further, or an endpoint not answer, is named.
func TestMismatches(t *testing.T) {
	cases := Cases([]string{"https://10.0.0.1:8443/metrics", "https://10.0.0.2:8443/metrics"}, "https://10.0.0.3:9464/metrics", "http://10.96.0.9:8082", false)
	if len(cases) != 6 {
		t.Fatalf("%d cases, want 6 (two operator replicas, the agent, the page, two queries)", len(cases))
	}
	if n := len(Args(cases)); n != 1+2*len(Tokens)*len(cases) {
		t.Fatalf("%d probe arguments, want %d", n, 1+2*len(Tokens)*len(cases))
	}
	for _, tc := range []struct {
		name   string
		change func([]Result) []Result
		want   []string // pieces of the one mismatch; none: no mismatch
	}{
		{"as documented", func(rs []Result) []Result { return rs }, nil},
		{"the stranger's own token reads the operator's metrics", func(rs []Result) []Result {
			rs[1].Status, rs[1].Body = 200, "# HELP x"
			return rs
		}, []string{"operator metrics https://10.0.0.1:8443/metrics", "token " + TokenOwn, "got 200", "want 403"}},
		{"no token reads the agent's metrics", func(rs []Result) []Result {
			rs[8].Status = 200
			return rs
		}, []string{"agent metrics", "token -", "want 401"}},
		{"the scraper reads the page", func(rs []Result) []Result {
			rs[14].Status = 200
			return rs
		}, []string{"endurance page", "token " + TokenScraper, "want 403"}},
		{"the reader's page is the sign-in form", func(rs []Result) []Result {
			rs[15].Body = "<form>sign in</form>"
			return rs
		}, []string{"endurance page", "lacks \"<!doctype html>\""}},
		{"PromQL answered", func(rs []Result) []Result {
			rs[23].Status, rs[23].Body = 200, `{"status":"success"}`
			return rs
		}, []string{"PromQL through the page", "got 200", "want 400"}},
		{"an endpoint unreachable", func(rs []Result) []Result {
			rs[2].Status, rs[2].Error = 0, "connect: connection refused"
			return rs
		}, []string{"token " + TokenScraper, "connection refused", "want 200"}},
		{"a line missing", func(rs []Result) []Result { return rs[:len(rs)-1] }, []string{"PromQL through the page", "token " + TokenReader, "no answer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(logOf(t, tc.change(asDocumented(cases))))
			if err != nil {
				t.Fatal(err)
			}
			m := Mismatches(cases, got)
			if tc.want == nil {
				if len(m) != 0 {
					t.Fatalf("mismatches %q, want none", m)
				}
				return
			}
			if len(m) != 1 {
				t.Fatalf("mismatches %q, want one", m)
			}
			for _, w := range tc.want {
				if !strings.Contains(m[0], w) {
					t.Errorf("mismatch %q lacks %q", m[0], w)
				}
			}
		})
	}
}

// TestNamedQueryWithPrometheus: with Prometheus behind the page, the reader's named query must get
// Prometheus' answer; the 502 of a page without one is a mismatch, and the other tokens still
// get 401 and 403.
func TestNamedQueryWithPrometheus(t *testing.T) {
	cases := Cases(nil, "https://10.0.0.3:9464/metrics", "http://10.96.0.9:8082", true)
	named := cases[2]
	if named.What != "page's named query" || named.Want[TokenReader] != 200 || named.Want[TokenScraper] != 403 || named.Want[TokenNone] != 401 {
		t.Fatalf("named query case %+v", named)
	}
	rs := asDocumented(cases)
	got, err := Parse(logOf(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	if m := Mismatches(cases, got); len(m) != 0 {
		t.Fatalf("as documented: %q", m)
	}
	for i := range rs {
		if rs[i].URL == named.URL && rs[i].Token == TokenReader {
			rs[i].Status, rs[i].Body = 502, `{"status":"error","errorType":"unavailable","error":"Prometheus did not answer: dial tcp"}`
		}
	}
	if got, err = Parse(logOf(t, rs)); err != nil {
		t.Fatal(err)
	}
	if m := Mismatches(cases, got); len(m) != 1 || !strings.Contains(m[0], "got 502") || !strings.Contains(m[0], "want 200") {
		t.Fatalf("a page without Prometheus: mismatches %q, want the 502 named", m)
	}
}

func TestParseRefusesABrokenLine(t *testing.T) {
	if _, err := Parse("probe: {\"token\":\n"); err == nil || !strings.Contains(err.Error(), "probe line") {
		t.Fatalf("Parse: %v, want the broken line named", err)
	}
}
