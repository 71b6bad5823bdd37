package exporter

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/prism-storage/prism/internal/endurance"
)

// legacyHistory is the JSON history agents wrote before the log (wear-history.json), a sample
// every 5 minutes; its MinInterval and MaxAge fields are ignored for NewHistory's.
type legacyHistory struct {
	Series map[string][]endurance.Sample `json:"series"`
}

// loadLegacy adds the samples of a legacy JSON history to h, thinned as Add thins them. It
// adds nothing when any sample is invalid, and the error names the file and the sample.
func loadLegacy(path string, h *History) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var l legacyHistory
	if err := json.Unmarshal(data, &l); err != nil {
		return fmt.Errorf("wear history %s: %w", path, err)
	}
	keys := make([]string, 0, len(l.Series))
	for key, series := range l.Series {
		if key == "" {
			return fmt.Errorf("wear history %s: series with an empty stable path", path)
		}
		for i, s := range series {
			if s.PercentUsed < endurance.UnknownPercent || s.PercentUsed > endurance.MaxPercentUsed {
				return fmt.Errorf("wear history %s: series %q, sample %d: PercentUsed %d outside %d..%d",
					path, key, i, s.PercentUsed, endurance.UnknownPercent, endurance.MaxPercentUsed)
			}
			if s.Time.IsZero() {
				return fmt.Errorf("wear history %s: series %q, sample %d: no Time", path, key, i)
			}
		}
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		series := l.Series[key]
		sort.SliceStable(series, func(i, j int) bool { return series[i].Time.Before(series[j].Time) })
		for _, s := range series {
			h.Add(key, s)
		}
	}
	return nil
}
