package inventory

import (
	"fmt"
	"strings"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/drivedb"
)

// classify gives a device its tier from the drive database. A drive the database does not
// know is never guessed: it is Other, and the reason says how a policy can still pick it.
func classify(d *prismv1.Device, entry drivedb.Entry, known bool) {
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
	default:
		d.Tier = prismv1.TierOther
		d.TierReason = fmt.Sprintf("model %q is not in the drive database; select it with a models or paths filter if it suits", d.Model)
	}
}
