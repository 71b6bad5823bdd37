package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Names shared by the dashboards and their links.
const (
	UIDOverview = "prism-endurance-overview"
	UIDNode     = "prism-endurance-node"
	UIDDevice   = "prism-endurance-device"

	tag = "prism"
)

func ptr[T any](v T) *T { return &v }

// ds is the data source every panel and query uses: the `datasource` variable.
var ds = dashboard.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${datasource}")}

// datasourceVar is the `datasource` variable, of type prometheus, on every dashboard.
func datasourceVar() *dashboard.DatasourceVariableBuilder {
	return dashboard.NewDatasourceVariableBuilder("datasource").
		Label("Data source").
		Type("prometheus")
}

// labelVar is a query variable listing the values of a label of prism_device_info.
func labelVar(name, label, selector string, multi bool) *dashboard.QueryVariableBuilder {
	q := "label_values(prism_device_info" + selector + ", " + name + ")"
	v := dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(ds).
		Query(dashboard.StringOrMap{String: ptr(q)}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortNaturalAsc)
	if multi {
		v = v.Multi(true).IncludeAll(true).AllValue(".*")
	}
	return v
}

// topnVar is how many nodes or devices the top-N panels show.
func topnVar() *dashboard.CustomVariableBuilder {
	return dashboard.NewCustomVariableBuilder("topn").
		Label("Top N").
		Values(dashboard.StringOrMap{String: ptr("5,10,20,50")}).
		Current(dashboard.VariableOption{
			Selected: ptr(true),
			Text:     dashboard.StringOrArrayOfString{String: ptr("10")},
			Value:    dashboard.StringOrArrayOfString{String: ptr("10")},
		})
}

// prismLinks links every Prism dashboard to the others, keeping time and variables.
func prismLinks() []cog.Builder[dashboard.DashboardLink] {
	return []cog.Builder[dashboard.DashboardLink]{
		dashboard.NewDashboardLinkBuilder("Prism").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{tag}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true),
	}
}

// newBoard starts a dashboard with the settings all three share.
func newBoard(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{tag, "endurance", "ssd"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("1m").
		Time("now-7d", "now").
		Timezone(common.TimeZoneBrowser).
		Links(prismLinks())
}

// rangeQ is a range query drawn as a time series.
func rangeQ(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		RefId(ref).
		Datasource(ds).
		Expr(expr).
		Range().
		LegendFormat(legend)
}

// instantQ is an instant query returned as a table (one row per series).
func instantQ(ref, expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		RefId(ref).
		Datasource(ds).
		Expr(expr).
		Instant().
		Format(prometheus.PromQueryFormatTable)
}

// statQ is an instant query for a single-value panel.
func statQ(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		RefId(ref).
		Datasource(ds).
		Expr(expr).
		Instant().
		LegendFormat(legend)
}

func thresholds(steps ...dashboard.Threshold) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().
		Mode(dashboard.ThresholdsModeAbsolute).
		Steps(steps)
}

func step(v *float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: v, Color: color}
}

// Threshold sets shared by the panels.
var (
	wearSteps  = []dashboard.Threshold{step(nil, "green"), step(ptr(0.5), "orange"), step(ptr(0.8), "red")}
	ratioSteps = []dashboard.Threshold{step(nil, "green"), step(ptr(0.8), "orange"), step(ptr(1.0), "red")}
	countSteps = []dashboard.Threshold{step(nil, "green"), step(ptr(1.0), "red")}
	plainSteps = []dashboard.Threshold{step(nil, "green")}
)

// series is a time-series panel with one or more range queries.
func series(title, description, unit string, w, h uint32, queries ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds).
		Unit(unit).
		Span(w).
		Height(h).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		SpanNulls(common.BoolOrFloat64{Bool: ptr(true)}).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"lastNotNull", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
	for _, q := range queries {
		p = p.WithTarget(q)
	}
	return p
}

// single is a stat panel with one instant query.
func single(title, description, unit string, steps []dashboard.Threshold, w uint32, q *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds).
		Unit(unit).
		Span(w).
		Height(4).
		Thresholds(thresholds(steps...)).
		ColorMode(common.BigValueColorModeValue).
		Orientation(common.VizOrientationAuto).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		WithTarget(q)
}

// column describes one value column of a multi-query table: the query's
// "Value #<ref>" field is renamed to name and displayed with unit.
type column struct {
	ref, name, unit string
	expr            string
	steps           []dashboard.Threshold // color the cell by these when set
}

// joinedTable is a table of instant queries merged on their shared labels
// (Grafana's "merge" transformation), with the values renamed and unit-formatted
// and the label columns hidden that only add noise.
func joinedTable(title, description string, w, h uint32, hide []string, sortBy string, desc bool, cols ...column) *table.PanelBuilder {
	p := table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds).
		Span(w).
		Height(h).
		Filterable(true).
		CellHeight(common.TableCellHeightSm).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{}).CountRows(false)).
		Thresholds(thresholds(plainSteps...))
	if sortBy != "" {
		p = p.SortBy([]cog.Builder[common.TableSortByFieldState]{
			common.NewTableSortByFieldStateBuilder().DisplayName(sortBy).Desc(desc),
		})
	}
	exclude := map[string]any{"Time": true}
	for _, l := range hide {
		exclude[l] = true
	}
	rename := map[string]any{}
	for _, c := range cols {
		p = p.WithTarget(instantQ(c.ref, c.expr))
		field := "Value #" + c.ref // Grafana's name for a query's value column
		if len(cols) == 1 {
			field = "Value" // … unless the table has a single query
		}
		if c.name == "" { // the query carries labels only; its value is 1
			exclude[field] = true
			continue
		}
		rename[field] = c.name
		props := []dashboard.DynamicConfigValue{{Id: "unit", Value: c.unit}}
		if c.steps != nil {
			props = append(props,
				dashboard.DynamicConfigValue{Id: "thresholds", Value: map[string]any{"mode": "absolute", "steps": stepMaps(c.steps)}},
				dashboard.DynamicConfigValue{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}},
			)
		}
		p = p.OverrideByName(c.name, props)
	}
	return p.
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": exclude,
			"renameByName":  rename,
		}})
}

// stepMaps spells thresholds as the generic JSON objects Grafana's override
// values are, so that the JSON reads back identically through the SDK's types.
func stepMaps(steps []dashboard.Threshold) []any {
	out := make([]any, 0, len(steps))
	for _, s := range steps {
		var v any // null: "from −∞"
		if s.Value != nil {
			v = *s.Value
		}
		out = append(out, map[string]any{"color": s.Color, "value": v})
	}
	return out
}

// link makes a table column a link, e.g. from a node to its node dashboard.
func link(title, url string) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "links", Value: []map[string]any{{"title": title, "url": url}}}
}

// row is a full-width, expanded row header.
func row(title string) *dashboard.RowBuilder {
	return dashboard.NewRowBuilder(title).Collapsed(false)
}

// finish numbers the panels 1..n in layout order (Grafana needs unique ids) and
// spells empty lists as [] rather than null, as Grafana writes them.
func finish(d dashboard.Dashboard, err error) (dashboard.Dashboard, error) {
	if err != nil {
		return d, err
	}
	for i := range d.Panels {
		id := uint32(i + 1)
		if p := d.Panels[i].Panel; p != nil {
			p.Id = &id
			if p.FieldConfig != nil && p.FieldConfig.Overrides == nil {
				p.FieldConfig.Overrides = []dashboard.DashboardFieldConfigSourceOverrides{}
			}
		}
		if r := d.Panels[i].RowPanel; r != nil {
			r.Id = id
			if r.Panels == nil {
				r.Panels = []dashboard.Panel{}
			}
		}
	}
	return d, nil
}
