// Package endurance turns a time series of wear counters into the figures an
// operator needs to plan drive replacement: bytes written, write
// amplification, drive writes per day (DWPD) spent against the rating, and
// the date each drive is expected to wear out.
//
// The package is pure: it reads samples and a rating and does arithmetic.
// Units: bytes are bytes, TB are decimal terabytes (10^12 bytes, as vendors
// rate TBW), a day is 24 hours, a year of warranty is 365 days.
//
// # Inputs
//
// A Sample is one reading of a drive's lifetime counters: host bytes
// written, media (NAND) bytes written when the drive reports them, percent
// of rated endurance used, and power-on hours. A Rating is the vendor's
// endurance rating: capacity, DWPD and/or TBW, warranty years and, when
// known, the warranty start.
//
// # Series and counter resets
//
// Samples are sorted by time. A counter that goes down (host bytes, media
// bytes, power-on hours or percent used lower than its last known value;
// media 0 and percent −1 are "not read", not zero) means the drive was
// replaced or its counters were reset; the series restarts at that sample
// and Report.Resets says so. Everything below uses only the samples from
// the last restart on.
//
// # Formulas
//
// Let H, M and P be the latest host bytes written, media bytes written and
// power-on hours (a reading the last sample lacks is taken from the latest
// sample that has it), C the capacity in bytes.
//
//	WAF                 = M ÷ H                      (of the latest sample reporting both)
//	power-on days       = P ÷ 24                     [days]
//	DWPD, lifetime      = H ÷ C ÷ (P ÷ 24)           [drive writes per power-on day]
//	DWPD, window w      = (H_last − H_first) ÷ C ÷ (t_last − t_first in days)
//
// The lifetime figure divides by power-on days, not calendar days: a drive
// that sat unpowered is not credited with idle days it never ran. The 24 h
// and 7 d window figures divide by wall-clock days between the first and
// last samples inside the window (first = earliest sample at or after
// t_last − w); a window counts only when those samples span at least w/2,
// and Partial says when they span less than w.
//
// Rating (365 days per warranty year, as vendors compute DWPD from TBW):
//
//	rated TBW  = DWPD × C × 365 × years ÷ 10^12      [TB]  when only DWPD is published
//	rated DWPD = TBW × 10^12 ÷ C ÷ (365 × years)     [1/day] when only TBW is published
//
// When both are published they are kept as published (a note flags them if
// they disagree by more than 10 %) and TBW drives the projection, because
// TBW is the figure the warranty is limited by.
//
//	TBW used        = W ÷ 10^12                      [TB]
//	TBW remaining   = rated TBW − W ÷ 10^12          [TB], negative when exceeded
//
// W is host bytes written: JEDEC JESD218 endurance ratings count data the
// host writes, so a vendor TBW is a host-write budget and write
// amplification is already priced into it. Rating.MediaBased switches W to
// media bytes for a rating stated in media writes.
//
// # Projected wear-out date
//
// Two independent projections, both from the last w = Options.Window
// (default 7 d) of samples, both anchored at the last sample's time t_last:
//
// By percent used: a least-squares line p(t) = a + s·t through the samples
// with a known percent used (at least Options.MinSamples of them spanning
// Options.MinSpan, else "insufficient data"). With p̂ = p(t_last) and the
// slope s in percent per day,
//
//	date = t_last + (100 − p̂) ÷ s   [days]
//
// By writes: with r = (W_last − W_first) ÷ (t_last − t_first) in bytes per
// day over the window (at least two samples spanning Options.MinSpan),
//
//	date = t_last + (rated TBW × 10^12 − W_last) ÷ r   [days]
//
// A rate ≤ 0 means the drive is not wearing at the current pace: no date
// ("no wear"). A drive already at or beyond its rating (p̂ ≥ 100, which
// NVMe allows up to 255, or W ≥ rated TBW) is "worn out" as of t_last. A
// date more than 100 years out is reported as "beyond horizon". No date is
// ever before t_last.
//
// Percent used is an integer, so on a slowly wearing drive a 7-day fit is
// often flat ("no wear") while the writes projection still gives a date;
// that is why both are reported. Report.WearOut is the earlier of the two
// dated projections; with neither dated it carries no date and says "no
// wear" or "beyond horizon" if either projection concluded so, else repeats
// the percent projection's status. WearsOutInWarranty compares its date
// with the warranty end (warranty start + years, calendar years).
package endurance
