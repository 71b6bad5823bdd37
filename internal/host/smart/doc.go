// Package smart reads `smartctl -j` output (smartmontools JSON, format
// version 1) and turns the vendor-specific SMART attributes of SATA SSDs
// into wear figures the endurance model can use.
//
// NVMe drives report wear in a standard log page (percentage used, data
// units written); SATA drives only through vendor attributes whose meaning
// and unit depend on the model family. ParseSmartctlJSON keeps every
// attribute as smartctl printed it; Report.Wear maps the families whose
// attributes are documented:
//
//	family                  percent used              host bytes written           WAF
//	Samsung SATA (QVO/EVO)  100 − normalized(177)     raw(241) × 512 B             —
//	Micron 5100/52x0/5300   100 − normalized(202)     raw(246) × 512 B             (raw(247)+raw(248)) / raw(247)
//	NVMe (any)              percentage_used           data_units_written × 512000  —
//
// Sources for each row are cited next to the mapping in wear.go. A model
// outside these families yields attributes but no wear figures: the package
// never guesses a unit.
package smart
