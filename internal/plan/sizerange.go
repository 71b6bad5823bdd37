package plan

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
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
	if r.High != 0 && r.Low > r.High {
		return r, fmt.Errorf("size %q: LOW is above HIGH", s)
	}
	return r, nil
}

func quantity(s string) (int64, error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	return q.Value(), nil
}

// Contains reports whether n bytes fall in the range.
func (r SizeRange) Contains(n int64) bool {
	return n >= r.Low && (r.High == 0 || n <= r.High)
}
