// Package report prints Prism objects as tables for people (kubectl prism, the demo).
package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/bytesize"
)

// Nodes prints one line per StorageNode: device counts per tier, the claiming policy and
// how fresh the inventory is.
func Nodes(w io.Writer, nodes []prismv1.StorageNode, now time.Time) error {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tDEVICES\tFAST\tCAPACITY\tELIGIBLE\tPOLICY\tINVENTORIED")
	for _, n := range nodes {
		age := "never"
		if t := n.Status.LastInventoryTime; t != nil {
			age = now.Sub(t.Time).Round(time.Second).String() + " ago"
		}
		if c := meta.FindStatusCondition(n.Status.Conditions, prismv1.ConditionInventoried); c != nil && c.Status != "True" {
			age += " (failing: " + c.Message + ")"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", n.Name, len(n.Status.Devices), n.Status.FastDevices,
			n.Status.CapacityDevices, n.Status.EligibleDevices, dash(n.Spec.PolicyName), age)
	}
	return tw.Flush()
}

// Devices prints every device of every node with its tier, why, and eligibility. wide adds
// the vendor and where it came from, the inferred tier with its confidence, and the evidence
// the hardware reports (PCI IDs, NPWG, rated endurance, model source).
func Devices(w io.Writer, nodes []prismv1.StorageNode, wide bool) error {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "NODE\tDEVICE\tMODEL\tVENDOR\tSIZE\tTIER\tINFERRED\tEVIDENCE\tWHY\tELIGIBLE")
	} else {
		fmt.Fprintln(tw, "NODE\tDEVICE\tMODEL\tSIZE\tTIER\tWHY\tELIGIBLE")
	}
	for _, n := range nodes {
		for _, d := range n.Status.Devices {
			if !wide {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, d.Name, dash(d.Model), bytesize.SI(d.SizeBytes),
					d.Tier, d.TierReason, eligibility(d.Eligibility))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n.Name, d.Name, dash(d.Model), vendor(d),
				bytesize.SI(d.SizeBytes), d.Tier, inferredTier(d), evidence(d), d.TierReason, eligibility(d.Eligibility))
		}
	}
	return tw.Flush()
}

func vendor(d prismv1.Device) string {
	if d.Vendor == "" {
		return "-"
	}
	if d.Evidence != nil && d.Evidence.VendorSource != "" {
		return d.Vendor + " (" + d.Evidence.VendorSource + ")"
	}
	return d.Vendor
}

func inferredTier(d prismv1.Device) string {
	if d.InferredTier == nil {
		return "-"
	}
	return fmt.Sprintf("%s (%s: %s)", d.InferredTier.Tier, d.InferredTier.Confidence, strings.Join(d.InferredTier.Reasons, "; "))
}

// evidence prints the hardware's facts compactly: pci=VID:DID[/SSVID] npwg=64KiB npdg=...
// tbw=32519 model=udev-ata (cut).
func evidence(d prismv1.Device) string {
	e := d.Evidence
	if e == nil {
		return "-"
	}
	var f []string
	if e.PCIVendorID != "" {
		p := "pci=" + e.PCIVendorID + ":" + dash(e.PCIDeviceID)
		if e.PCISubsystemVendorID != "" && e.PCISubsystemVendorID != e.PCIVendorID {
			p += "/" + e.PCISubsystemVendorID
		}
		f = append(f, p)
	}
	for _, g := range []struct {
		name  string
		bytes int64
	}{{"npwg", e.PreferredWriteGranularityBytes}, {"npdg", e.PreferredDeallocateGranularityBytes}, {"nows", e.OptimalWriteSizeBytes}} {
		if g.bytes > 0 {
			f = append(f, fmt.Sprintf("%s=%dKiB", g.name, g.bytes>>10))
		}
	}
	if e.EnduranceEstimateTBW != "" {
		f = append(f, "tbw="+e.EnduranceEstimateTBW)
	}
	if e.ModelSource != "" {
		m := "model=" + e.ModelSource
		if e.ModelMaybeCut {
			m += "(cut)"
		}
		f = append(f, m)
	}
	if len(e.Markers) > 0 {
		f = append(f, "markers="+strconv.Itoa(len(e.Markers)))
	}
	if len(f) == 0 {
		return "-"
	}
	return strings.Join(f, " ")
}

// Selection prints, per policy and node, the devices chosen for each tier, each capacity
// device's DB slot, and the others' reasons.
func Selection(w io.Writer, policies []prismv1.HybridStoragePolicy) error {
	sort.Slice(policies, func(i, j int) bool { return policies[i].Name < policies[j].Name })
	for _, p := range policies {
		ready := meta.FindStatusCondition(p.Status.Conditions, prismv1.ConditionReady)
		state := "not reconciled yet"
		if ready != nil {
			state = fmt.Sprintf("Ready=%s (%s): %s", ready.Status, ready.Reason, ready.Message)
		}
		fmt.Fprintf(w, "Policy %s (%s): %d nodes selected, %d with both tiers. %s\n", p.Name, p.Spec.Mode,
			p.Status.SelectedNodes, p.Status.ReadyNodes, state)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		// DB SLOT: the partition each capacity device's OSD gets its DB on (planned already in DryRun).
		fmt.Fprintln(tw, "  NODE\tROLE\tDEVICE\tMODEL\tSIZE\tDB SLOT\tREASON")
		for _, n := range p.Status.Nodes {
			if n.Message != "" {
				fmt.Fprintf(tw, "  %s\t-\t-\t-\t-\t-\t%s\n", n.Node, n.Message)
			}
			for _, d := range n.Fast {
				fmt.Fprintf(tw, "  %s\tfast\t%s\t%s\t%s\t-\t\n", n.Node, d.Name, dash(d.Model), bytesize.SI(d.SizeBytes))
			}
			for _, d := range n.Capacity {
				fmt.Fprintf(tw, "  %s\tcapacity\t%s\t%s\t%s\t%s\t\n", n.Node, d.Name, dash(d.Model), bytesize.SI(d.SizeBytes), dash(d.DBSlot))
			}
			for _, d := range n.Rejected {
				fmt.Fprintf(tw, "  %s\tnot used\t%s\t-\t-\t-\t%s\n", n.Node, d.Name, d.Reason)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if p.Status.OmittedNodes > 0 {
			fmt.Fprintf(w, "  (%d more nodes without problems are not listed; their plans are in their StorageNodes)\n", p.Status.OmittedNodes)
		}
	}
	return nil
}

func eligibility(e prismv1.Eligibility) string {
	if e.Eligible {
		return "yes"
	}
	var r []string
	for _, reason := range e.Reasons {
		r = append(r, reason.Filter)
	}
	return "no: " + strings.Join(r, ", ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
