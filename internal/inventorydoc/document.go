// Package inventorydoc is the inventory document `prism-agent inventory -o json` prints and
// `kubectl prism plan --inventory` reads: a format both sides share, so that the plugin reads
// it without linking the agent's host adapters.
package inventorydoc

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/bytesize"
)

// Document is the JSON that `prism-agent inventory -o json` prints (docs/inventory.md).
type Document struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Node       string `json:"node,omitempty"`
	// Labels are the node's Kubernetes labels, when known: kubectl prism plan matches a
	// policy's spec.nodeSelector against them (the agent does not write them).
	Labels   map[string]string `json:"labels,omitempty"`
	HostRoot string            `json:"hostRoot"`
	TakenAt  time.Time         `json:"takenAt"`
	Devices  []prismv1.Device  `json:"devices"`
	Warnings []string          `json:"warnings,omitempty"`
}

// New wraps an inventory's devices and warnings for printing.
func New(node, hostRoot string, takenAt time.Time, devices []prismv1.Device, warnings []string) Document {
	if devices == nil {
		devices = []prismv1.Device{}
	}
	return Document{
		APIVersion: prismv1.GroupVersion.String(), Kind: "Inventory",
		Node: node, HostRoot: hostRoot, TakenAt: takenAt.UTC(), Devices: devices, Warnings: warnings,
	}
}

// WriteJSON prints the document as indented JSON.
func (d Document) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// WriteTable prints one line per device: what it is, its tier and why, and whether Prism may use it.
func (d Document) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMODEL\tSIZE\tTRANSPORT\tTIER\tELIGIBLE\tWHY\tSTABLE PATH")
	for _, dev := range d.Devices {
		why := dev.TierReason
		if !dev.Eligibility.Eligible {
			var rs []string
			for _, r := range dev.Eligibility.Reasons {
				rs = append(rs, r.Filter+": "+r.Message)
			}
			why = strings.Join(rs, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\t%s\t%s\n", dev.Name, orDash(dev.Model), bytesize.SI(dev.SizeBytes),
			orDash(dev.Transport), dev.Tier, dev.Eligibility.Eligible, why, orDash(dev.StablePath))
	}
	for _, warn := range d.Warnings {
		fmt.Fprintf(tw, "warning: %s\n", warn)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
