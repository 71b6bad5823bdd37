package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	prismv1 "github.com/prism-storage/prism/api/v1alpha1"
	"github.com/prism-storage/prism/internal/bytesize"
)

// SizeRange is an inclusive byte range; zero bounds are open.
type SizeRange struct {
	Low, High int64
}

// ParseSizeRange parses the cephadm-style LOW:HIGH, LOW:, :HIGH or a single size.
func ParseSizeRange(s string) (SizeRange, error) {
	if s == "" {
		return SizeRange{}, nil
	}
	lowStr, highStr, isRange := strings.Cut(s, ":")
	if !isRange {
		v, err := quantity(s)
		if err == nil && v == 0 {
			err = fmt.Errorf("size %q: a single size must be above 0 (0 would mean no bound)", s)
		}
		return SizeRange{Low: v, High: v}, err
	}
	var r SizeRange
	var err error
	if lowStr != "" {
		if r.Low, err = quantity(lowStr); err != nil {
			return r, err
		}
	}
	if highStr != "" {
		if r.High, err = quantity(highStr); err != nil {
			return r, err
		}
	}
	if lowStr == "" && highStr == "" {
		return r, fmt.Errorf("size %q: give LOW, HIGH or both", s)
	}
	if highStr != "" && r.High == 0 {
		return r, fmt.Errorf("size %q: HIGH must be above 0 (0 would mean no bound)", s)
	}
	if r.High != 0 && r.Low > r.High {
		return r, fmt.Errorf("size %q: LOW is above HIGH", s)
	}
	return r, nil
}

// maxBound is the largest bound a size range may name (the CRD's limit): sizes of up to it
// never overflow int64.
var maxBound = resource.MustParse(prismv1.MaxDeviceSize)

func quantity(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	if q.Sign() < 0 || q.Cmp(maxBound) > 0 {
		return 0, fmt.Errorf("size %q: must be between 0 and %s", s, prismv1.MaxDeviceSize)
	}
	return q.Value(), nil
}

// Contains reports whether n bytes fall in the range.
func (r SizeRange) Contains(n int64) bool {
	return n >= r.Low && (r.High == 0 || n <= r.High)
}

// sizeMismatch says in a sentence how n bytes fall outside the range spec, which parsed to r:
// "size 512.11 GB is below the size range 1T–4T".
func sizeMismatch(n int64, spec string, r SizeRange) string {
	low, high, isRange := strings.Cut(spec, ":")
	size := "size " + bytesize.SI(n)
	switch {
	case !isRange:
		return fmt.Sprintf("%s is not the selector's size %s (%s)", size, spec, bytesize.SI(r.Low))
	case low != "" && high != "":
		return fmt.Sprintf("%s is %s the size range %s–%s", size, side(n, r), low, high)
	case low != "":
		return fmt.Sprintf("%s is below the size range %s and up", size, low)
	default:
		return fmt.Sprintf("%s is above the size range up to %s", size, high)
	}
}

func side(n int64, r SizeRange) string {
	if n < r.Low {
		return "below"
	}
	return "above"
}
