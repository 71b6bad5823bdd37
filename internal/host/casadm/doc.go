// Package casadm parses the machine-readable output of Open CAS's casadm:
// the cache list (-L -o csv), statistics (-P -o csv), parameters (-G -o csv)
// and version (-V -o csv), into a type model a metrics exporter and a casadm
// emulator can share.
//
// Columns are always found by their title, never by position: the set of
// columns differs between Open CAS releases (v25.12.2 lacks the deferred
// request counters that v26.03.2 prints; master adds prefetch and cleaner
// ones). Errors name the line and column at fault. The parsers are pure: they
// read text, they never run casadm. Formats and real outputs:
// /work/shared/reference/opencas (copied to testdata/).
package casadm
