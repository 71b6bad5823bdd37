package inventory

import (
	"fmt"
	"strconv"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/drivedb"
)

// classify gives a device its tier from the drive database. A drive the database does not
// know is never guessed into a tier: it is Other, and the reason says how a policy can still
// pick it (infer adds what its evidence points to, for policies that opt in).
func classify(d *prismv1.Device, entry drivedb.Entry, known, modelMaybeCut bool) {
	switch {
	case known:
		d.Tier = prismv1.Tier(entry.Tier)
		d.Media = string(entry.Media)
		d.TierReason = fmt.Sprintf("%s %s (%s) matches drive database line %d", entry.Vendor, entry.Family, entry.Media, entry.Line)
	case strings.HasPrefix(d.Name, "loop"):
		d.Tier = prismv1.TierOther
		d.TierReason = "loop device: no drive model to classify"
	case d.Rotational:
		d.Tier = prismv1.TierOther
		d.Media = "HDD"
		d.TierReason = "rotational device (HDD)"
	case d.Model == "":
		d.Tier = prismv1.TierOther
		d.TierReason = "the device reports no model; select it explicitly by path if it suits"
	case modelMaybeCut:
		d.Tier = prismv1.TierOther
		d.TierReason = fmt.Sprintf("only the 16-character SCSI INQUIRY form %q of the ATA model is visible (SAS HBA, RAID controller or USB bridge) and ATA IDENTIFY gave no full model: it is not matched against the drive database; select it with a paths filter if it suits", d.Model)
	default:
		d.Tier = prismv1.TierOther
		d.TierReason = fmt.Sprintf("model %q is not in the drive database; select it with a models, vendors or paths filter if it suits", d.Model)
	}
}

// Inference thresholds (docs/discovery.md, decision 0022).
const (
	// coarseWriteUnit: an internal write unit this large is an indirection unit coarser than
	// the 4 KiB mapping of TLC drives; QLC data-centre drives use 16 or 64 KiB.
	coarseWriteUnit = 16 << 10
	// lowDWPD: rated drive writes per day at or below this are read-intensive or QLC ratings.
	lowDWPD = 1.0
	// fastDWPD: only storage-class memory and SLC flash are rated this high (Optane 30-100,
	// Micron XTR 35, Kioxia FL6 60).
	fastDWPD = 30.0
	// assumedWarrantyYears turns an endurance estimate into DWPD: the drive does not report
	// its warranty, and 5 years (the data-centre norm) gives the lower DWPD of the usual 3 or 5.
	assumedWarrantyYears = 5
)

// infer says which tier a drive the database does not know would have from its evidence,
// with a confidence and the facts; nil when the evidence says nothing about the tier.
func infer(d *prismv1.Device, ev *prismv1.DeviceEvidence) *prismv1.InferredTier {
	if d.Rotational || strings.HasPrefix(d.Name, "loop") || d.SizeBytes <= 0 {
		return nil
	}
	if len(ev.Markers) > 0 {
		return &prismv1.InferredTier{Tier: prismv1.TierFast, Confidence: prismv1.ConfidenceHigh, Reasons: append([]string(nil), ev.Markers...)}
	}
	dwpd, dwpdReason := ratedDWPD(d.SizeBytes, ev.EnduranceEstimateTBW)
	coarse := d.InternalWriteUnitSource == "nvme-npwg" && d.InternalWriteUnitBytes >= coarseWriteUnit
	unit := fmt.Sprintf("the namespace's preferred write granularity (NPWG) is %d KiB, a coarse internal write unit (at least %d KiB: QLC indirection units)",
		d.InternalWriteUnitBytes>>10, coarseWriteUnit>>10)
	if dwpdReason != "" && dwpd >= fastDWPD {
		fast := dwpdReason + fmt.Sprintf(": at least %g, which only storage-class memory or SLC flash is rated", fastDWPD)
		if coarse {
			// One of the two fields is wrong (or the drive is something new): an SCM or SLC
			// drive maps 4 KiB units. Advice only, never used by a selector.
			return &prismv1.InferredTier{Tier: prismv1.TierFast, Confidence: prismv1.ConfidenceLow,
				Reasons: []string{fast, unit + ", which contradicts it: storage-class memory and SLC drives write 4 KiB units, so confidence stays low"}}
		}
		return &prismv1.InferredTier{Tier: prismv1.TierFast, Confidence: prismv1.ConfidenceHigh, Reasons: []string{fast}}
	}
	if !coarse {
		return nil
	}
	if dwpdReason != "" && dwpd <= lowDWPD {
		return &prismv1.InferredTier{Tier: prismv1.TierCapacity, Confidence: prismv1.ConfidenceMedium,
			Reasons: []string{unit, dwpdReason + fmt.Sprintf(": at most %g, a read-intensive or QLC rating", lowDWPD)}}
	}
	reasons := []string{unit}
	if dwpdReason != "" {
		reasons = append(reasons, dwpdReason+": too high for a QLC rating, so confidence stays low")
	} else {
		reasons = append(reasons, "no rated endurance reported (no Endurance Group Information log)")
	}
	return &prismv1.InferredTier{Tier: prismv1.TierCapacity, Confidence: prismv1.ConfidenceLow, Reasons: reasons}
}

// ratedDWPD turns the endurance group's estimate into drive writes per day.
func ratedDWPD(sizeBytes int64, tbw string) (float64, string) {
	if tbw == "" {
		return 0, ""
	}
	v, err := strconv.ParseFloat(tbw, 64)
	if err != nil || v <= 0 {
		return 0, ""
	}
	days := float64(assumedWarrantyYears) * 365
	dwpd := v * 1e12 / float64(sizeBytes) / days
	return dwpd, fmt.Sprintf("the drive's endurance estimate (log 09h) is %s TB written, %s DWPD over an assumed %d-year warranty",
		tbw, decimal(dwpd), assumedWarrantyYears)
}
