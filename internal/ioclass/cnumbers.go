package ioclass

import (
	"fmt"
	"strconv"
	"strings"
)

// validateNum is casadm's validate_str_num: strtoul base 10 (which takes
// leading spaces, a sign, and wraps negatives) over the whole field, then a
// range check. It returns casadm's message on failure.
func validateNum(s, what string, max uint64) (uint64, string) {
	v, ok := strtoul10(s)
	if !ok {
		return 0, fmt.Sprintf("Invalid %s, must be a correct unsigned decimal integer.", what)
	}
	if v > max {
		return 0, fmt.Sprintf("Invalid %s, must be in the range 0-%d.", what, max)
	}
	return v, ""
}

// strtoul10 is C's strtoul(s, &end, 10) required to consume all of s; ok is
// false when it would not (no digits, trailing text, overflow).
func strtoul10(s string) (uint64, bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	v, ok := kstrtou64(s[i:])
	if !ok || strings.HasSuffix(s, "\n") || s[i] == '+' {
		return 0, false
	}
	if neg {
		v = -v // strtoul negates in unsigned arithmetic
	}
	return v, true
}

// parseAllocation is casadm's calculate_max_allocation: at most 4
// characters, the whole string a C float (strtof), 0 <= x <= 1. NaN, which
// casadm lets through, is refused.
func parseAllocation(s string) (float32, bool) {
	if len(s) > MaxAllocationLen || cFloatPrefix(s) != len(s) || s == "" {
		return 0, false
	}
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	if h := strings.TrimLeft(t, "+-"); len(h) > 1 && h[0] == '0' && (h[1] == 'x' || h[1] == 'X') && !strings.ContainsAny(h, "pP") {
		t += "p0" // Go wants a binary exponent on hex floats; strtof does not
	}
	v, err := strconv.ParseFloat(t, 32)
	if err != nil || v != v || v < 0 || v > 1 {
		return 0, false
	}
	return float32(v), true
}

// cFloatPrefix returns how many bytes of s C's strtof would consume.
func cFloatPrefix(s string) int {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := strings.ToLower(s[i:])
	switch {
	case strings.HasPrefix(rest, "infinity"):
		return i + 8
	case strings.HasPrefix(rest, "inf"), strings.HasPrefix(rest, "nan"):
		return i + 3 // "nan(...)" cannot fit in 4 characters
	}
	isDigit, expChar := isDec, byte('e')
	if len(rest) >= 2 && rest[0] == '0' && rest[1] == 'x' && len(rest) > 2 && (isHex(rest[2]) || (rest[2] == '.' && len(rest) > 3 && isHex(rest[3]))) {
		i += 2
		rest = rest[2:]
		isDigit, expChar = isHex, 'p'
	}
	j, n := 0, 0
	for j < len(rest) && isDigit(rest[j]) {
		j, n = j+1, n+1
	}
	if j < len(rest) && rest[j] == '.' {
		j++
		for j < len(rest) && isDigit(rest[j]) {
			j, n = j+1, n+1
		}
	}
	if n == 0 {
		return 0
	}
	if j < len(rest) && rest[j] == expChar {
		k := j + 1
		if k < len(rest) && (rest[k] == '+' || rest[k] == '-') {
			k++
		}
		if k < len(rest) && isDec(rest[k]) {
			for k < len(rest) && isDec(rest[k]) {
				k++
			}
			j = k
		}
	}
	return i + j
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool { return isDec(c) || (c >= 'a' && c <= 'f') }
