package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/bytesize"
)

// OSDs prints every node's OSDs from their StorageNode status: the DB slot, the deepest RocksDB
// level it keeps on the fast tier, the spill forecast and the slot the next level needs; then
// each OSD's data classes (the seeds' PRISM table); then, per planned fast device, how many
// slots of each advised size it holds.
func OSDs(w io.Writer, nodes []prismv1.StorageNode, now time.Time) error {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if err := osdPolicies(w, nodes, now); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tOSD\tDB USED\tDB SLOT\tSPILLED\tON FAST TIER\tSPILL FORECAST\tNEXT LEVEL NEEDS")
	any := false
	for _, n := range nodes {
		for _, o := range n.Status.OSDs {
			any = true
			fmt.Fprintf(tw, "%s\tosd.%d\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, o.ID, bytesize.IEC(o.DBUsedBytes), bytesize.IEC(o.DBTotalBytes),
				spilled(o), levelsOnFast(o), forecast(o, now), nextLevel(o))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !any {
		_, err := fmt.Fprintln(w, "\nNo StorageNode reports an OSD: the agents find OSD admin sockets under agent.cephSocketDir (Rook: <dataDirHostPath>/exporter).")
		return err
	}
	for _, n := range nodes {
		for _, o := range n.Status.OSDs {
			if err := osdClasses(w, n.Name, o); err != nil {
				return err
			}
		}
		if err := fastDeviceFit(w, n); err != nil {
			return err
		}
	}
	return nil
}

// osdPolicies prints one line per policy (the nodes' spec.policyName): its OSDs, how many
// spilled, how many are forecast to spill within 14 days, the soonest forecast and the range
// of RocksDB levels their slots keep on the fast tier.
func osdPolicies(w io.Writer, nodes []prismv1.StorageNode, now time.Time) error {
	type agg struct {
		nodes, osds, spilled, soon int
		soonest                    *time.Time
		minLevel, maxLevel         int32
		levels                     bool
	}
	by := map[string]*agg{}
	var names []string
	for _, n := range nodes {
		if len(n.Status.OSDs) == 0 {
			continue
		}
		name := n.Spec.PolicyName
		if name == "" {
			name = "(none)"
		}
		a, ok := by[name]
		if !ok {
			a = &agg{}
			by[name] = a
			names = append(names, name)
		}
		a.nodes++
		for _, o := range n.Status.OSDs {
			a.osds++
			if o.Spilled {
				a.spilled++
			}
			if f := o.SpillForecastTime; f != nil && !o.Spilled {
				if f.Sub(now) < 14*24*time.Hour {
					a.soon++
				}
				if a.soonest == nil || f.Time.Before(*a.soonest) {
					t := f.Time
					a.soonest = &t
				}
			}
			if l := o.LevelsOnFast; l != nil {
				if !a.levels || *l < a.minLevel {
					a.minLevel = *l
				}
				if !a.levels || *l > a.maxLevel {
					a.maxLevel = *l
				}
				a.levels = true
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY	NODES	OSDS	SPILLED	SPILL WITHIN 14 DAYS	SOONEST SPILL	LEVELS ON FAST TIER")
	for _, name := range names {
		a := by[name]
		soonest := "-"
		if a.soonest != nil {
			soonest = a.soonest.UTC().Format("2006-01-02 15:04")
		}
		levels := "unknown"
		if a.levels {
			levels = levelRange(a.minLevel, a.maxLevel)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", name, a.nodes, a.osds, a.spilled, a.soon, soonest, levels)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

func levelRange(lo, hi int32) string {
	name := func(l int32) string {
		if l < 0 {
			return "none"
		}
		return fmt.Sprintf("L0..L%d", l)
	}
	if lo == hi {
		return name(lo)
	}
	return name(lo) + " to " + name(hi)
}

func osdClasses(w io.Writer, node string, o prismv1.OSDStatus) error {
	fmt.Fprintf(w, "\n%s osd.%d", node, o.ID)
	if o.Message != "" {
		fmt.Fprintf(w, " (%s)", o.Message)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CLASS\tOCCUPIED\tWRITTEN/DAY\tSHARE OF WRITES\tBETA")
	for _, c := range o.Classes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Name, ibytesPtr(c.OccupiedBytes), ibytesPtr(c.WrittenBytesPerDay), share(c.WriteShare), dash(c.Beta))
	}
	return tw.Flush()
}

// fastDeviceFit prints, per fast device of the node's plan, how many slots of each advised
// size it holds (the advice of the node's first OSD reporting one: the OSDs of a node share
// Rook's RocksDB settings).
func fastDeviceFit(w io.Writer, n prismv1.StorageNode) error {
	var advice []prismv1.OSDSlotOption
	for _, o := range n.Status.OSDs {
		if len(o.SlotAdvice) > 0 {
			advice = o.SlotAdvice
			break
		}
	}
	if n.Spec.Plan == nil || len(advice) == 0 {
		return nil
	}
	sizes := map[string]int64{}
	for _, d := range n.Status.Devices {
		sizes[d.StablePath] = d.SizeBytes
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\n%s fast devices if their slots were resized\n", n.Name)
	fmt.Fprintln(tw, "  FAST DEVICE\tSIZE\tSLOTS NOW\tSLOT NOW\tSLOTS THAT FIT PER LEVEL KEPT ON THE FAST TIER")
	for _, f := range n.Spec.Plan.FastDevices {
		size := sizes[f.StablePath]
		var fits []string
		for _, a := range advice {
			if a.SlotBytes <= 0 || size <= 0 {
				continue
			}
			mark := ""
			if size/a.SlotBytes >= int64(len(f.Slots)) {
				mark = " (all)"
			}
			fits = append(fits, fmt.Sprintf("L0..L%d: %d × %s%s", a.Level, size/a.SlotBytes, bytesize.IEC(a.SlotBytes), mark))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", f.StablePath, bytesize.IEC(size), len(f.Slots), bytesize.IEC(f.SlotSizeBytes), dash(strings.Join(fits, ", ")))
	}
	return tw.Flush()
}

func spilled(o prismv1.OSDStatus) string {
	if o.Spilled {
		return bytesize.IEC(o.SlowUsedBytes)
	}
	return "no"
}

func levelsOnFast(o prismv1.OSDStatus) string {
	switch {
	case o.LevelsOnFast == nil:
		return "unknown"
	case *o.LevelsOnFast < 0:
		return "not even WAL+L0"
	default:
		return fmt.Sprintf("WAL, L0..L%d", *o.LevelsOnFast)
	}
}

func forecast(o prismv1.OSDStatus, now time.Time) string {
	switch {
	case o.Spilled:
		return "spilled"
	case o.SpillForecastTime == nil:
		return "none (not growing, or too few readings)"
	case !o.SpillForecastTime.After(now):
		return "due now"
	default:
		return fmt.Sprintf("%s (in %s)", o.SpillForecastTime.UTC().Format("2006-01-02 15:04"), days(o.SpillForecastTime.Sub(now)))
	}
}

func nextLevel(o prismv1.OSDStatus) string {
	if o.LevelsOnFast == nil {
		return "-"
	}
	for _, a := range o.SlotAdvice {
		if a.Level == *o.LevelsOnFast+1 {
			return fmt.Sprintf("%s for L0..L%d", bytesize.IEC(a.SlotBytes), a.Level)
		}
	}
	return "-"
}

func days(d time.Duration) string {
	if d < 48*time.Hour {
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%.0f days", d.Hours()/24)
}

func share(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ibytesPtr(p *int64) string {
	if p == nil {
		return "unknown"
	}
	return bytesize.IEC(*p)
}
