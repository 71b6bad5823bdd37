package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// probeResult is one line of `sleep probe`: who asked (the token file, "-" for none), what,
// and what came back: the HTTP status, or the error when no answer came.
type probeResult struct {
	Token  string `json:"token"`
	URL    string `json:"url"`
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"` // the answer's first bytes, for the suite's failure message
	Error  string `json:"error,omitempty"`
}

// probe sends GET to each URL with the bearer token read from its file (args come in pairs,
// TOKEN_FILE URL; "-" sends none) and prints one "probe: {json}" line per pair. HTTPS is not
// verified: Prism's endpoints serve self-signed certificates by default, as the chart's
// PodMonitors (insecureSkipVerify) expect. A pod in another namespace runs it (test/e2e) to
// try Prism's endpoints as a stranger would.
func probe(args []string, out io.Writer) error {
	if len(args) == 0 || len(args)%2 != 0 {
		return fmt.Errorf("probe: want pairs of TOKEN_FILE URL, got %d arguments", len(args))
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed, see above
	}}
	enc := json.NewEncoder(out)
	for i := 0; i < len(args); i += 2 {
		res := probeOne(c, args[i], args[i+1])
		if _, err := fmt.Fprint(out, "probe: "); err != nil {
			return err
		}
		if err := enc.Encode(res); err != nil {
			return err
		}
	}
	return nil
}

func probeOne(c *http.Client, tokenFile, url string) probeResult {
	res := probeResult{Token: tokenFile, URL: url}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if tokenFile != "-" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			res.Error = err.Error()
			return res
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	resp, err := c.Do(req)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	res.Status, res.Body = resp.StatusCode, string(body)
	return res
}
