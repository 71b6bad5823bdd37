package drivedb

import (
	"strconv"
	"strings"
)

// ModelSource says where a model string was read, which decides how it may have been
// padded, escaped or cut on the way.
type ModelSource int

const (
	// SourceNVMeIdentify is the Identify Controller MN field (40 bytes, space padded), or
	// /sys/class/nvme/<ctrl>/model, which is the same field.
	SourceNVMeIdentify ModelSource = iota
	// SourceATAIdentify is the ATA IDENTIFY DEVICE model (words 27-46, 40 characters, space
	// padded), as smartctl's model_name or hdparm -I print it.
	SourceATAIdentify
	// SourceSCSIInquiry is the INQUIRY product identification (16 bytes), which sysfs
	// device/model shows. Behind SCSI/ATA translation (vendor "ATA": libata, SAS HBAs, USB
	// bridges) it is the first 16 characters of the ATA model.
	SourceSCSIInquiry
	// SourceUdevModelEnc is udev's ID_MODEL_ENC: the raw field with every byte that is not
	// safe in a property escaped as \xNN (spaces as \x20, padding kept).
	SourceUdevModelEnc
	// SourceUdevModel is udev's ID_MODEL: for ata_id and scsi_id the field with spaces
	// replaced by '_' and trailing padding dropped; for NVMe the sysfs model as it is.
	SourceUdevModel
)

// inquiryProductLen is the length of the SCSI INQUIRY product identification (SPC-4 6.6.2).
const inquiryProductLen = 16

// Model is a drive's model string in one canonical form, whatever source it came from.
type Model struct {
	// Text is the model with escapes decoded, padding and NULs trimmed and runs of
	// whitespace collapsed; underscores a tool substituted for spaces are kept as read
	// (Micron's real models contain underscores), since matching treats both alike.
	Text string
	// MaybeCut is true when the string may be only the first 16 characters of the model: a
	// SCSI INQUIRY product of a drive behind SCSI/ATA translation, or udev's ID_MODEL(_ENC)
	// taken from that INQUIRY (scsi_id, usb_id) rather than from ATA IDENTIFY (ata_id).
	MaybeCut bool
}

// NormalizeModel turns a model string read from src into its canonical form. translated
// says the device sits behind SCSI/ATA translation (sysfs vendor "ATA", or udev ID_VENDOR
// "ATA" with ID_BUS other than "ata"), where INQUIRY-derived strings may be cut.
func NormalizeModel(raw string, src ModelSource, translated bool) Model {
	s := raw
	if src == SourceUdevModelEnc {
		s = DecodeUdevEscapes(s)
	}
	s = strings.Map(func(r rune) rune {
		if r == 0 {
			return ' '
		}
		return r
	}, s)
	m := Model{Text: strings.Join(strings.Fields(s), " ")}
	switch src {
	case SourceSCSIInquiry, SourceUdevModelEnc, SourceUdevModel:
		// A cut can fall on a space ("Samsung SSD 870 " from "Samsung SSD 870 QVO 4TB"), so
		// any INQUIRY-derived string of a translated ATA device up to 16 characters may be cut.
		m.MaybeCut = translated && len(m.Text) <= inquiryProductLen
	}
	return m
}

// DecodeUdevEscapes decodes udev's \xNN escapes (ID_MODEL_ENC, ID_VENDOR_ENC); anything that
// is not a complete escape is kept as it is.
func DecodeUdevEscapes(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MatchKey is the form models and patterns are compared in: lower case, '_' as a space
// (udev and by-id names turn spaces into underscores, and Micron names its drives with
// underscores that tools print either way), whitespace runs collapsed.
func MatchKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(s, "_", " ")), " "))
}
