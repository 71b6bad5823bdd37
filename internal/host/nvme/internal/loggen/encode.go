package main

import (
	"encoding/hex"
	"fmt"
	"sort"
)

// encode writes only the recorded fields; every other byte stays zero.
func encode(l logRec) []byte {
	b := make([]byte, l.Size)
	sp := specFor(l.ID)
	for _, f := range l.Fields {
		s, ok := sp[f.Name]
		if !ok {
			panic(fmt.Sprintf("log %#02x: no layout for field %q", l.ID, f.Name))
		}
		w := min(s.width, 8) // every recorded value fits in 64 bits; high bytes stay zero
		for i := 0; i < w; i++ {
			b[s.off+i] = byte(f.V >> (8 * i))
		}
	}
	if l.GUID {
		g, err := hex.DecodeString(ocpGUID)
		if err != nil {
			panic(err)
		}
		for i := range g { // reverse: the page stores the value little-endian
			b[496+i] = g[len(g)-1-i]
		}
	}
	for i, e := range l.Entries {
		o := 12 * i
		b[o], b[o+3] = e.ID, e.Norm
		copy(b[o+5:o+11], e.Raw[:])
	}
	return b
}

// missing lists the layout fields a log recording does not set.
func missing(l logRec) []string {
	have := map[string]bool{}
	for _, f := range l.Fields {
		have[f.Name] = true
	}
	var out []string
	for name := range specFor(l.ID) {
		if !have[name] {
			out = append(out, name)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		si, sj := specFor(l.ID)[out[i]], specFor(l.ID)[out[j]]
		return si.off < sj.off
	})
	return out
}
