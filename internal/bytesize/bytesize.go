// Package bytesize prints byte counts for people: in decimal units as drive vendors state
// capacity, or in binary units as partitions, caches and Ceph report sizes.
package bytesize

import "fmt"

// SI prints n in decimal units with two decimals ("512.11 GB"), as a drive's label states it.
func SI(n int64) string {
	return format(n, 1000, "kMGTPE", "%.2f %cB")
}

// IEC prints n in binary units with one decimal ("1.1 GiB"), as partitions and Ceph print them.
func IEC(n int64) string {
	return format(n, 1024, "KMGTPE", "%.1f %ciB")
}

func format(n, unit int64, prefixes, layout string) string {
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := unit, 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf(layout, float64(n)/float64(div), prefixes[exp])
}
