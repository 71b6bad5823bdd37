package drivedb

// globMatch reports whether s matches pattern p, where '*' matches any run of
// characters (including none) and '?' exactly one. Both are already
// normalised. It backtracks only to the last '*', so it runs in
// O(len(p)*len(s)) time without recursion.
func globMatch(p, s []rune) bool {
	pi, si := 0, 0
	star, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == '*':
				star, starS = pi, si
				pi++
				continue
			case c == '?' || c == s[si]:
				pi++
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last '*' swallow one more character and retry.
		starS++
		pi, si = star+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// globStats counts literal characters and wildcards, the specificity measure.
func globStats(p []rune) (literals, wildcards int) {
	for _, c := range p {
		if c == '*' || c == '?' {
			wildcards++
		} else {
			literals++
		}
	}
	return literals, wildcards
}
