package writes

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Markdown writes the note's tables: the run's conditions, the headline (QLC bytes per client
// byte with and without Prism, per workload) and, per workload, Prism's per-OSD table in the
// seeds' shape for each layout.
func Markdown(w io.Writer, c Counters) error {
	figs, err := Headline(c)
	if err != nil {
		return err
	}
	p := &printer{w: w}
	p.f("| | |\n| --- | --- |\n| date | %s |\n", c.Date)
	for _, part := range []struct {
		name string
		m    map[string]string
	}{{"machine", c.Machine}, {"versions", c.Versions}, {"settings", c.Settings}} {
		for _, k := range sortedKeys(part.m) {
			p.f("| %s: %s | %s |\n", part.name, k, cell(part.m[k]))
		}
	}
	p.f("\n| workload | client MiB written (alone / Prism) | QLC bytes per client byte, QLC alone | with Prism | fast device per client byte | α: device writes kept off QLC | QLC DWPD per TB/day of client writes (%.2f TB drive), alone / Prism | endurance ratio | deepest RocksDB level with files (alone / Prism) | load after (alone / Prism) |\n",
		ReferenceQLCTB)
	p.f("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range figs {
		p.f("| %s | %.0f / %.0f | %s | %s | %s | %s | %s / %s | %s | %s / %s | %s / %s |\n", f.Workload, mib(f.Alone.ClientBytes), mib(f.Prism.ClientBytes),
			num(f.AlonePerClient, 2), num(f.PrismPerClient, 2), num(f.FastPerClient, 2), pct(f.Alpha), num(f.AloneDWPD, 3), num(f.PrismDWPD, 3),
			times(f.Endurance), level(DeepestLevel(f.Alone.LevelFiles)), level(DeepestLevel(f.Prism.LevelFiles)), f.Alone.Load, f.Prism.Load)
	}
	for _, f := range figs {
		p.f("\n#### %s\n\n", f.Workload)
		for _, r := range []Run{f.Alone, f.Prism} {
			p.f("%s: `%s`; client wrote %.1f MiB", r.Layout, r.Command, mib(r.ClientBytes))
			if r.ClientReadBytes > 0 {
				p.f(" and read %.1f MiB", mib(r.ClientReadBytes))
			}
			p.f("; the kernel counted %.1f MiB written to the fast device and %.1f MiB to QLC (%.0f s).\n\n", mib(r.FastBytes), mib(r.QLCBytes), r.Seconds)
			p.f("| class (%s) | device | occupancy MiB | writes MiB | α share | β |\n| --- | --- | --- | --- | --- | --- |\n", r.Layout)
			for _, row := range ClassRows(r) {
				name := row.Class
				if row.Breakdown {
					name = "↳ " + name
				}
				p.f("| %s | %s | %s | %s | %s | %s |\n", name, row.Device, optMiB(row.Occupied), optMiB(row.Written), optPct(row.Share), optNum(row.Beta))
			}
			p.f("\n")
		}
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func num(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.*f", digits, v)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f %%", 100*v)
}

func times(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f×", v)
}

func level(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprintf("L%d", n)
}

func optMiB(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f", mib(*p))
}

func optPct(p *float64) string {
	if p == nil {
		return "-"
	}
	return pct(*p)
}

func optNum(p *float64) string {
	if p == nil {
		return "-"
	}
	return num(*p, 2)
}
