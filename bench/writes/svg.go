package writes

import (
	"html"
	"io"
	"math"
	"strings"
)

// SVG geometry, in pixels.
const (
	svgWidth   = 760
	svgLabelW  = 300
	svgBarH    = 16
	svgGap     = 14
	svgTop     = 40
	svgBarMaxW = svgWidth - svgLabelW - 90
)

// SVG draws the headline as a plain bar chart: per workload, QLC bytes per client byte on the
// QLC drive alone and in Prism's layout, on one scale starting at 0.
func SVG(w io.Writer, c Counters) error {
	figs, err := Headline(c)
	if err != nil {
		return err
	}
	top := 0.0
	for _, f := range figs {
		top = math.Max(top, math.Max(finite(f.AlonePerClient), finite(f.PrismPerClient)))
	}
	if top == 0 {
		top = 1
	}
	height := svgTop + len(figs)*(2*svgBarH+svgGap) + 30
	p := &printer{w: w}
	p.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", svgWidth, height, svgWidth, height)
	p.f(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	version, _, _ := strings.Cut(c.Versions["ceph"], " (") // "ceph version 16.2.15", without the commit
	p.f(`<text x="10" y="18" font-size="14" font-weight="bold">QLC bytes written per client byte (kernel counters; %s)</text>`+"\n", html.EscapeString(version))
	p.f(`<rect x="10" y="26" width="10" height="10" fill="#b0413e"/><text x="24" y="35">QLC alone</text>` + "\n")
	p.f(`<rect x="110" y="26" width="10" height="10" fill="#3e6fb0"/><text x="124" y="35">Prism's layout (DB slot on the fast device)</text>` + "\n")
	y := svgTop + 6
	for _, f := range figs {
		p.f(`<text x="10" y="%d">%s</text>`+"\n", y+svgBarH+4, html.EscapeString(f.Workload))
		for _, bar := range []struct {
			v     float64
			color string
		}{{f.AlonePerClient, "#b0413e"}, {f.PrismPerClient, "#3e6fb0"}} {
			wpx := int(math.Round(finite(bar.v) / top * svgBarMaxW))
			p.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`, svgLabelW, y, wpx, svgBarH-2, bar.color)
			p.f(`<text x="%d" y="%d">%s</text>`+"\n", svgLabelW+wpx+4, y+svgBarH-4, num(bar.v, 2))
			y += svgBarH
		}
		y += svgGap
	}
	p.f(`<text x="10" y="%d" fill="#555">No latency: emulated drives (loop devices). Date %s.</text>`+"\n", height-10, html.EscapeString(c.Date))
	p.f("</svg>\n")
	return p.err
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
