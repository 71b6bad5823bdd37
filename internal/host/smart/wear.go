package smart

import (
	"fmt"
	"math/bits"
	"strings"
)

// Family names a set of drives whose wear attributes share a meaning.
type Family string

const (
	FamilyUnknown     Family = ""
	FamilyNVMe        Family = "nvme"         // standard SMART / Health log
	FamilySamsungSATA Family = "samsung-sata" // smartctl "Samsung based SSDs"
	FamilyMicron5x00  Family = "micron-5x00"  // smartctl "Micron 5100 / 52x0 / 5300 / 5400 SSDs"
)

// Wear is what a report says about endurance. Each figure has a Known flag
// because most families publish only some of them.
type Wear struct {
	Family Family

	PercentUsed      int // percent of rated endurance used; NVMe may exceed 100
	PercentUsedKnown bool

	HostBytesWritten      uint64
	HostBytesWrittenKnown bool

	// WAF is media writes ÷ host writes over the drive's life.
	WAF      float64
	WAFKnown bool

	// Sources says which field gave each figure, for display and audit.
	Sources []string
}

// SATA attribute ids used below.
const (
	attrSamsungWearLeveling = 177 // Wear_Leveling_Count
	attrSamsungLBAsWritten  = 241 // Total_LBAs_Written
	attrMicronLifeRemain    = 202 // Percent_Lifetime_Remain
	attrMicronLBAsWritten   = 246 // Total_LBAs_Written
	attrMicronHostPages     = 247 // Host_Program_Page_Count
	attrMicronFTLPages      = 248 // Bckgnd_Program_Page_Cnt (FTL_Program_Page_Count on client drives)
)

// lbaBytes is the unit of the "Total_LBAs_Written" attributes mapped here:
// 512-byte sectors. Both fixtures confirm it: the attribute equals (Samsung)
// or tracks within 0.0000002 % (Micron) the ATA Device Statistics "Logical
// Sectors Written" of the same smartctl -x run, on 512-byte-sector drives.
const lbaBytes = 512

// nvmeDataUnit is one NVMe data unit: 1000 × 512 bytes.
const nvmeDataUnit = 512000

// FamilyOf classifies a report by smartctl's family string, then by model.
func FamilyOf(r Report) Family {
	if r.NVMe != nil {
		return FamilyNVMe
	}
	fam := strings.ToLower(r.ModelFamily)
	model := strings.ToLower(strings.Join(strings.Fields(r.ModelName), " "))
	switch {
	case fam == "samsung based ssds",
		strings.HasPrefix(model, "samsung ssd "), strings.HasPrefix(model, "samsung mz7"):
		return FamilySamsungSATA
	case strings.HasPrefix(fam, "micron 5100 / 52x0"),
		hasAnyPrefix(model, "micron_5100_", "micron_5200_", "micron_5210_", "micron_5300", "micron_5400_"):
		return FamilyMicron5x00
	}
	return FamilyUnknown
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Wear maps the report's family attributes to wear figures. An error means a
// counter overflowed 64 bits when converted to bytes.
func (r Report) Wear() (Wear, error) {
	w := Wear{Family: FamilyOf(r)}
	var err error
	switch w.Family {
	case FamilyNVMe:
		err = w.nvme(r.NVMe)
	case FamilySamsungSATA:
		err = w.samsung(r)
	case FamilyMicron5x00:
		err = w.micron(r)
	}
	return w, err
}

// nvme: percentage used and data units written are defined by the NVMe
// Base Specification (SMART / Health Information log, bytes 5 and 48-63).
func (w *Wear) nvme(h *NVMeHealth) error {
	w.PercentUsed, w.PercentUsedKnown = int(h.PercentageUsed), true
	w.Sources = append(w.Sources, "percent used: nvme percentage_used")
	hi, lo := bits.Mul64(h.DataUnitsWritten, nvmeDataUnit)
	if hi != 0 {
		return fmt.Errorf("smart: nvme data_units_written %d × %d bytes overflows uint64", h.DataUnitsWritten, nvmeDataUnit)
	}
	w.HostBytesWritten, w.HostBytesWrittenKnown = lo, true
	w.Sources = append(w.Sources, "host bytes: nvme data_units_written × 512000")
	return nil
}

// samsung: attribute 177 Wear_Leveling_Count is Samsung's P/E-cycle wear
// counter (Samsung "SSD Application Note: S.M.A.R.T.",
// https://download.semiconductor.samsung.com/resources/others/SSD_Application_Note_SMART_final.pdf,
// as cited by netdata PR #16245); its normalized value counts down from 100.
// 241 Total_LBAs_Written counts 512-byte LBAs. The 870 QVO fixture confirms
// both: 100 − normalized 85 = 15 equals the drive's ATA Device Statistics
// "Percentage Used Endurance Indicator" 15, and raw 241 equals its "Logical
// Sectors Written" on a 512-byte-sector drive.
func (w *Wear) samsung(r Report) error {
	if a, ok := r.Attribute(attrSamsungWearLeveling); ok {
		w.PercentUsed, w.PercentUsedKnown = 100-min(int(a.Value), 100), true
		w.Sources = append(w.Sources, "percent used: 100 − normalized attribute 177 Wear_Leveling_Count")
	}
	return w.lbas(r, attrSamsungLBAsWritten, "241 Total_LBAs_Written")
}

// micron: smartmontools' drivedb entry "Micron 5100 / 52x0 / 5300 / 5400
// SSDs" (which references Micron TN-FD-34, 5100 SSD SMART Implementation)
// names 202 Percent_Lifetime_Remain ("Remaining endurance, trips at 10%"),
// 246 Total_LBAs_Written, 247 Host_Program_Page_Count and 248
// Bckgnd_Program_Page_Cnt. WAF = (host + background program pages) ÷ host
// program pages: the NAND pages programmed per page the host asked for.
// Micron's note on this calculation is TN-FD-23
// (tnfd23_m500_smart_attributes_calc_waf.pdf, linked for 247/248 in
// nvme-cli issue #1558; its text was not available here). In the 5210
// 7.68 TB fixture 100 − normalized 97 = 3 equals the drive's Device
// Statistics "Percentage Used Endurance Indicator" 3.
func (w *Wear) micron(r Report) error {
	if a, ok := r.Attribute(attrMicronLifeRemain); ok {
		w.PercentUsed, w.PercentUsedKnown = 100-min(int(a.Value), 100), true
		w.Sources = append(w.Sources, "percent used: 100 − normalized attribute 202 Percent_Lifetime_Remain")
	}
	host, okH := r.Attribute(attrMicronHostPages)
	ftl, okF := r.Attribute(attrMicronFTLPages)
	switch {
	case !okH || !okF || !host.RawKnown || !ftl.RawKnown:
	case host.Raw == 0:
		// A drive that has not programmed host pages yet has no WAF.
		w.Sources = append(w.Sources, "waf: unknown, attribute 247 Host_Program_Page_Count is 0")
	default:
		w.WAF = (float64(host.Raw) + float64(ftl.Raw)) / float64(host.Raw)
		w.WAFKnown = true
		w.Sources = append(w.Sources, "waf: (raw 247 + raw 248) ÷ raw 247")
	}
	return w.lbas(r, attrMicronLBAsWritten, "246 Total_LBAs_Written")
}

// lbas converts a Total_LBAs_Written raw value to bytes.
func (w *Wear) lbas(r Report, id uint8, name string) error {
	a, ok := r.Attribute(id)
	if !ok || !a.RawKnown {
		return nil
	}
	hi, lo := bits.Mul64(a.Raw, lbaBytes)
	if hi != 0 {
		return fmt.Errorf("smart: attribute %s raw %d × %d bytes overflows uint64", name, a.Raw, lbaBytes)
	}
	w.HostBytesWritten, w.HostBytesWrittenKnown = lo, true
	w.Sources = append(w.Sources, "host bytes: raw attribute "+name+" × 512")
	return nil
}
