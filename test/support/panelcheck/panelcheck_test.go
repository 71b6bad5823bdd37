package panelcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prism-storage/prism/internal/dashboards"
)

func response(typ, result string) Response {
	var r Response
	r.Status, r.Data.ResultType, r.Data.Result = "success", typ, json.RawMessage(result)
	return r
}

// TestCount: NaN and ±Inf (a division by a zero rate) are not data.
func TestCount(t *testing.T) {
	for _, tc := range []struct {
		typ, result    string
		series, finite int
		err            bool
	}{
		{"vector", `[]`, 0, 0, false},
		{"vector", `[{"metric":{},"value":[1,"0"]},{"metric":{},"value":[1,"NaN"]}]`, 2, 1, false},
		{"vector", `[{"metric":{},"value":[1,"+Inf"]},{"metric":{},"value":[1,"-Inf"]}]`, 2, 0, false},
		{"matrix", `[{"metric":{},"values":[[1,"NaN"],[2,"3.5"]]},{"metric":{},"values":[]}]`, 2, 1, false},
		{"scalar", `[1,"2"]`, 1, 1, false},
		{"scalar", `[1,"NaN"]`, 1, 0, false},
		{"string", `[1,"x"]`, 0, 0, true},
		{"vector", `{"not":"a list"}`, 0, 0, true},
	} {
		series, finite, err := Count(response(tc.typ, tc.result))
		if series != tc.series || finite != tc.finite || (err != nil) != tc.err {
			t.Errorf("%s %s: %d series, %d finite, %v; want %d, %d, error %t", tc.typ, tc.result, series, finite, err, tc.series, tc.finite, tc.err)
		}
	}
}

// TestRunSubstitutesAndPicksTheEndpoint: against a fake Prometheus that answers every instant
// query with nothing and every range query with one series, Run sends each dashboard query to
// the endpoint its panel uses, with no variable left and label_values as PromQL, and reports
// exactly the instant ones as without data.
func TestRunSubstitutesAndPicksTheEndpoint(t *testing.T) {
	var mu sync.Mutex
	sent := map[string][]string{} // path -> queries
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent[r.URL.Path] = append(sent[r.URL.Path], r.URL.Query().Get("query"))
		mu.Unlock()
		if r.URL.Path == "/api/v1/query_range" {
			if r.URL.Query().Get("step") != "5" || r.URL.Query().Get("start") == "" {
				t.Errorf("range parameters %v", r.URL.Query())
			}
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`)
			return
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer prom.Close()
	vars := map[string]string{"node": "n1", "device": "nvme0n1"}
	results, err := Run(context.Background(), prom.URL, Options{
		Common:   map[string]string{"__rate_interval": "10s", "__interval": "2s", "topn": "3"},
		PerBoard: map[string]map[string]string{dashboards.UIDOverview: vars, dashboards.UIDNode: vars, dashboards.UIDDevice: vars},
		Step:     5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	all, _ := All()
	instant := 0
	for i, r := range results {
		if r.Query != all[i] {
			t.Fatalf("result %d is for %s, want %s", i, r.Name(), all[i].Dashboard+"/"+all[i].Panel)
		}
		if strings.Contains(r.Run, "$") || strings.HasPrefix(r.Run, "label_values") {
			t.Errorf("%s ran %q", r.Name(), r.Run)
		}
		switch p := r.Problem(); {
		case r.Instant && p != "no data":
			t.Errorf("%s (instant) problem %q, want no data", r.Name(), p)
		case !r.Instant && p != "":
			t.Errorf("%s (range) problem %q", r.Name(), p)
		}
		if r.Instant {
			instant++
		}
	}
	if len(sent["/api/v1/query"]) != instant || len(sent["/api/v1/query_range"]) != len(results)-instant || instant == 0 || instant == len(results) {
		t.Errorf("%d instant and %d range requests for %d instant queries of %d", len(sent["/api/v1/query"]), len(sent["/api/v1/query_range"]), instant, len(results))
	}
}

// TestRunReportsAnUnknownVariable: a variable without a value is a problem of that query,
// not a request with "$" in it.
func TestRunReportsAnUnknownVariable(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("query"); strings.Contains(q, "$") {
			t.Errorf("a query with a variable reached Prometheus: %s", q)
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer prom.Close()
	results, err := Run(context.Background(), prom.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withVars := 0
	for _, r := range results {
		if !strings.Contains(r.Expr, "$") {
			continue
		}
		withVars++
		if p := r.Problem(); !strings.Contains(p, "unsubstituted variable") {
			t.Errorf("%s: %q", r.Name(), p)
		}
	}
	if withVars == 0 {
		t.Fatal("no dashboard query uses a variable")
	}
}

// TestRunTriesAlternativesForQueriesWithoutData: a fake Prometheus has data only for the
// device sdb; device-dashboard queries naming a device fail with nvme0n1 and pass with the
// alternative sdb (reported as alternative 1), while a query that never names a device keeps
// its PerBoard result.
func TestRunTriesAlternativesForQueriesWithoutData(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Query().Get("query"), `"sdb"`) {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"]]}]}}`)
			return
		}
		fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	}))
	defer prom.Close()
	common := map[string]string{"__rate_interval": "10s", "__interval": "2s", "topn": "3", "node": "n1"}
	results, err := Run(context.Background(), prom.URL, Options{
		Common:       common,
		PerBoard:     map[string]map[string]string{dashboards.UIDDevice: {"device": "nvme0n1"}},
		Alternatives: map[string][]map[string]string{dashboards.UIDDevice: {{"device": "nvme9n9"}, {"device": "sdb"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	withDevice := 0
	for _, r := range results {
		if r.Dashboard != dashboards.UIDDevice {
			if r.Alternative != 0 {
				t.Errorf("%s (not the device dashboard) used alternative %d", r.Name(), r.Alternative)
			}
			continue
		}
		if strings.Contains(r.Expr, `"$device"`) {
			withDevice++
			if r.Problem() != "" || r.Alternative != 2 || !strings.Contains(r.Run, `"sdb"`) {
				t.Errorf("%s: problem %q, alternative %d, ran %s; want data from alternative 2 (sdb)", r.Name(), r.Problem(), r.Alternative, r.Run)
			}
		} else if !strings.Contains(r.Expr, "$device") && r.Problem() != "no data" {
			t.Errorf("%s names no device: problem %q, want no data", r.Name(), r.Problem())
		}
	}
	if withDevice == 0 {
		t.Fatal("no device-dashboard query names $device")
	}
}

// FuzzCount: any answer body is counted or refused, never a panic.
func FuzzCount(f *testing.F) {
	f.Add("vector", `[{"metric":{},"value":[1,"0"]}]`)
	f.Add("matrix", `[{"metric":{},"values":[[1,"NaN"]]}]`)
	f.Add("scalar", `[1,"2"]`)
	f.Add("scalar", `[1]`)
	f.Fuzz(func(t *testing.T, typ, result string) {
		if !json.Valid([]byte(result)) {
			return
		}
		series, finite, err := Count(response(typ, result))
		if err == nil && typ == "vector" && finite > series {
			t.Fatalf("%d series, %d finite", series, finite)
		}
	})
}
