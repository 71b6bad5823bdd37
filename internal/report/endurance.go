package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
)

// NodeEndurance is one node's worst device: the earliest projected wear-out, else the most worn.
type NodeEndurance struct {
	Node     string
	Device   prismv1.Device
	WearOut  *time.Time
	Percent  *int32
	Warranty *time.Time
}

// WorstDevices picks each node's worst device and sorts nodes by soonest wear-out, then wear.
func WorstDevices(nodes []prismv1.StorageNode) []NodeEndurance {
	var out []NodeEndurance
	for _, n := range nodes {
		var best *NodeEndurance
		for _, d := range n.Status.Devices {
			if d.Endurance == nil {
				continue
			}
			c := NodeEndurance{Node: n.Name, Device: d, Percent: d.Endurance.PercentUsed}
			if t := d.Endurance.WearOutTime; t != nil {
				c.WearOut = &t.Time
			}
			if t := d.Endurance.WarrantyEndTime; t != nil {
				c.Warranty = &t.Time
			}
			if best == nil || worse(c, *best) {
				cc := c
				best = &cc
			}
		}
		if best == nil {
			best = &NodeEndurance{Node: n.Name}
		}
		out = append(out, *best)
	}
	sort.SliceStable(out, func(i, j int) bool { return worse(out[i], out[j]) })
	return out
}

func worse(a, b NodeEndurance) bool {
	switch {
	case a.WearOut != nil && b.WearOut != nil:
		return a.WearOut.Before(*b.WearOut)
	case a.WearOut != nil || b.WearOut != nil:
		return a.WearOut != nil
	}
	return pct(a.Percent) > pct(b.Percent)
}

func pct(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

// Endurance prints the cluster-wide table; colour marks wear-out within 90 days or before the
// warranty ends (red) and wear above 80 % (yellow), only when color is true (a terminal).
func Endurance(w io.Writer, nodes []prismv1.StorageNode, now time.Time, color bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tDEVICE\tMODEL\tTIER\tWEAR\tWEAR-OUT\tDWPD SPENT/RATED\tWAF")
	for _, e := range WorstDevices(nodes) {
		if e.Device.Name == "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\tno data yet\t-\t-\n", e.Node)
			continue
		}
		d, en := e.Device, e.Device.Endurance
		wear, wearOut := "-", "no projection"
		if e.Percent != nil {
			wear = strconv.Itoa(int(*e.Percent)) + " %"
		}
		if e.WearOut != nil {
			wearOut = e.WearOut.Format("2006-01-02")
		}
		dwpd := dash(en.DWPDLifetime)
		if d.RatedEndurance != nil && d.RatedEndurance.DWPD != "" {
			dwpd += " / " + d.RatedEndurance.DWPD
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", e.Node, d.Name, dash(d.Model), d.Tier, wear, wearOut, dwpd, dash(en.WriteAmplification))
		switch {
		case !color:
		case e.WearOut != nil && (e.WearOut.Sub(now) < 90*24*time.Hour || (e.Warranty != nil && e.WearOut.Before(*e.Warranty))):
			line = "\x1b[31m" + line + "\x1b[0m"
		case pct(e.Percent) >= 80:
			line = "\x1b[33m" + line + "\x1b[0m"
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
