package endurance

import "time"

// UnknownPercent marks a sample whose percent used was not read.
const UnknownPercent = -1

// MaxPercentUsed is the largest percent used a drive can report: NVMe
// saturates its 8-bit field at 255 ("255 % or more").
const MaxPercentUsed = 255

// Sample is one reading of a drive's lifetime counters.
type Sample struct {
	Time              time.Time
	HostBytesWritten  uint64 // bytes the host wrote, since manufacture
	MediaBytesWritten uint64 // bytes written to the media (NAND); 0 = not reported
	PercentUsed       int    // percent of rated endurance used, 0-255; UnknownPercent if not read
	PowerOnHours      uint64
}

// Rating is the vendor's endurance rating of a drive; zero means unpublished.
type Rating struct {
	CapacityBytes uint64
	RatedDWPD     float64   // drive writes per day over the warranty
	RatedTBW      float64   // terabytes (10^12 bytes) written over the warranty
	WarrantyYears int       //
	WarrantyStart time.Time // zero = unknown
	MediaBased    bool      // RatedTBW counts media writes instead of host writes
}

// Options tune the projections; zero fields take the defaults.
type Options struct {
	Window     time.Duration // samples used for the recent slope; default 7 d
	MinSamples int           // percent-used fit needs this many samples; default 3
	MinSpan    time.Duration // and the window's samples must span this; default 24 h
}

const (
	day               = 24 * time.Hour
	defaultWindow     = 7 * day
	defaultMinSamples = 3
	defaultMinSpan    = day
	bytesPerTB        = 1e12
	daysPerYear       = 365
	horizonDays       = 100 * daysPerYear // later dates are "beyond horizon"
)

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = defaultWindow
	}
	if o.MinSamples < 2 {
		o.MinSamples = defaultMinSamples
	}
	if o.MinSpan <= 0 {
		o.MinSpan = defaultMinSpan
	}
	return o
}

// Value is a figure that may be unknown.
type Value struct {
	V     float64
	Known bool
}

func known(v float64) Value { return Value{V: v, Known: true} }

// WindowRate is the write rate over a recent window.
type WindowRate struct {
	DWPD        Value         // drive writes per calendar day
	BytesPerDay Value         // host bytes per calendar day
	Span        time.Duration // time between the window's first and last samples
	Partial     bool          // the samples span less than the window
}

// RatingUsed is the rating after filling in DWPD or TBW from the other.
type RatingUsed struct {
	DWPD, TBW               Value // TBW in TB
	DWPDDerived, TBWDerived bool  // computed here rather than published
}

// Status says what a projection could conclude.
type Status string

const (
	StatusOK               Status = "ok"                // Date is the projected wear-out date
	StatusWornOut          Status = "worn-out"          // rated endurance already used; Date = last sample
	StatusInsufficientData Status = "insufficient-data" // too few samples or too short a span
	StatusNoWear           Status = "no-wear"           // rate ≤ 0: no wear-out at the current pace
	StatusNoRating         Status = "no-rating"         // writes projection without a TBW
	StatusBeyondHorizon    Status = "beyond-horizon"    // more than 100 years out
)

// Projection is one wear-out estimate.
type Projection struct {
	Status     Status
	Date       time.Time // set for StatusOK and StatusWornOut
	RatePerDay float64   // percent per day (by percent) or bytes per day (by writes)
	Basis      string    // how the figure was obtained
}

// HasDate reports whether Date is meaningful.
func (p Projection) HasDate() bool { return p.Status == StatusOK || p.Status == StatusWornOut }

// Reset records a counter that went down between two samples.
type Reset struct {
	At      time.Time // time of the first sample of the new series
	Counter string
	From    uint64
	To      uint64
}

// Report is the endurance picture of one drive.
type Report struct {
	First, Last time.Time // samples of the series used (after the last reset)
	Samples     int
	Resets      []Reset

	// Latest readings; a reading the last sample lacks is the latest one before it.
	HostBytesWritten  uint64
	MediaBytesWritten uint64 // 0 = never reported
	PercentUsed       int    // UnknownPercent if never read
	WAF               Value  // media ÷ host of the latest sample reporting both

	PowerOnDays  Value // power-on hours ÷ 24
	DWPDLifetime Value // host bytes ÷ capacity ÷ power-on days
	DWPD24h      WindowRate
	DWPD7d       WindowRate

	Rating         RatingUsed
	TBWUsed        Value // TB counted against the rating (host, or media when MediaBased)
	TBWRemaining   Value // TB; negative when the rating is exceeded
	TBWUsedPercent Value // TBWUsed ÷ rated TBW × 100

	ByPercent Projection
	ByWrites  Projection
	WearOut   Projection // the earlier dated projection

	WarrantyEnd        time.Time // zero when start or years are unknown
	WarrantyCompared   bool      // WarrantyEnd and WearOut.Date are both known
	WearsOutInWarranty bool      // WearOut.Date is before WarrantyEnd

	Notes []string
}
