package panelcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Response is a Prometheus HTTP API answer (/api/v1/query, /api/v1/query_range).
type Response struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// Get calls the Prometheus HTTP API at prom (http://host:port) and returns its answer; a
// non-success status is an error carrying Prometheus's message.
func Get(ctx context.Context, prom, path string, params url.Values) (Response, error) {
	var r Response
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, prom+path+"?"+params.Encode(), nil)
	if err != nil {
		return r, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("HTTP %d: %s", resp.StatusCode, body)
	}
	if r.Status != "success" {
		return r, fmt.Errorf("HTTP %d: %s", resp.StatusCode, r.Error)
	}
	return r, nil
}

// Scalar runs an instant query and returns the value of its first series; no series, or
// no finite value, is an error.
func Scalar(ctx context.Context, prom, query string) (float64, error) {
	r, err := Get(ctx, prom, "/api/v1/query", url.Values{"query": {query}})
	if err != nil {
		return 0, err
	}
	n, finite, err := Count(r)
	if err != nil || n == 0 || finite == 0 {
		return 0, fmt.Errorf("no data (%v)", err)
	}
	var vec []struct {
		Value [2]any `json:"value"`
	}
	if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
		return 0, err
	}
	if len(vec) == 0 {
		return 0, fmt.Errorf("%s: result type %s, not a vector", query, r.Data.ResultType)
	}
	s, _ := vec[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// Labels runs an instant query and returns each series' value of label, in result order.
func Labels(ctx context.Context, prom, query, label string) ([]string, error) {
	r, err := Get(ctx, prom, "/api/v1/query", url.Values{"query": {query}})
	if err != nil {
		return nil, err
	}
	var vec []struct {
		Metric map[string]string `json:"metric"`
	}
	if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
		return nil, fmt.Errorf("%s: result type %s: %w", query, r.Data.ResultType, err)
	}
	var out []string
	for _, s := range vec {
		if v, ok := s.Metric[label]; ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// Count counts the series (or the scalar) of a result and its finite values: NaN and ±Inf,
// what a division by a zero rate gives, are not data a panel can draw.
func Count(r Response) (series, finite int, err error) {
	isFinite := func(v any) bool {
		s, _ := v.(string)
		f, err := strconv.ParseFloat(s, 64)
		return err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	switch r.Data.ResultType {
	case "vector":
		var vec []struct {
			Value [2]any `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &vec); err != nil {
			return 0, 0, err
		}
		for _, s := range vec {
			if isFinite(s.Value[1]) {
				finite++
			}
		}
		return len(vec), finite, nil
	case "matrix":
		var mat []struct {
			Values [][2]any `json:"values"`
		}
		if err := json.Unmarshal(r.Data.Result, &mat); err != nil {
			return 0, 0, err
		}
		for _, s := range mat {
			for _, v := range s.Values {
				if isFinite(v[1]) {
					finite++
				}
			}
		}
		return len(mat), finite, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(r.Data.Result, &v); err != nil {
			return 0, 0, err
		}
		if isFinite(v[1]) {
			finite = 1
		}
		return 1, finite, nil
	}
	return 0, 0, fmt.Errorf("result type %q", r.Data.ResultType)
}

// Unix is t as the API's time parameter (seconds with milliseconds).
func Unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }
