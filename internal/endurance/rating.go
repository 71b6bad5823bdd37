package endurance

import (
	"fmt"
	"math"
)

// deriveRating fills in whichever of DWPD and TBW is missing:
//
//	TBW  = DWPD × C × 365 × years ÷ 10^12   [TB]
//	DWPD = TBW × 10^12 ÷ C ÷ (365 × years)  [drive writes per day]
//
// Both need the capacity C in bytes and the warranty years. Published
// figures are kept as published; a note flags a pair that disagrees by
// more than 10 % (the drive database has such entries).
func deriveRating(r Rating) (RatingUsed, []string) {
	var u RatingUsed
	var notes []string
	if r.RatedDWPD > 0 {
		u.DWPD = known(r.RatedDWPD)
	}
	if r.RatedTBW > 0 {
		u.TBW = known(r.RatedTBW)
	}
	if r.CapacityBytes == 0 || r.WarrantyYears == 0 {
		return u, notes
	}
	capTB := float64(r.CapacityBytes) / bytesPerTB
	warrantyDays := float64(daysPerYear * r.WarrantyYears)
	switch {
	case u.DWPD.Known && !u.TBW.Known:
		u.TBW, u.TBWDerived = known(r.RatedDWPD*capTB*warrantyDays), true
	case u.TBW.Known && !u.DWPD.Known:
		u.DWPD, u.DWPDDerived = known(r.RatedTBW/capTB/warrantyDays), true
	case u.TBW.Known && u.DWPD.Known:
		implied := r.RatedTBW / capTB / warrantyDays
		if math.Abs(implied-r.RatedDWPD) > 0.1*r.RatedDWPD {
			notes = append(notes, fmt.Sprintf("rated TBW %.6g TB implies %.4g DWPD over %d years, not the published %.4g; the projection uses TBW",
				r.RatedTBW, implied, r.WarrantyYears, r.RatedDWPD))
		}
	}
	return u, notes
}
