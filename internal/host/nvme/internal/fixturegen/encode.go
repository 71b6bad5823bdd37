package main

import "encoding/binary"

// Field layouts are written independently of the parser (same spec offsets)
// so the fixture tests check the parser against a second encoding.

func setASCII(b []byte, start, end int, s string) {
	for i := start; i < end; i++ {
		b[i] = ' ' // the spec pads ASCII fields with spaces
	}
	copy(b[start:end], s)
}

// encodeCtrl writes only the fields marked recorded; the rest stay zero.
func encodeCtrl(c ctrlRec) []byte {
	b := make([]byte, 4096)
	le := binary.LittleEndian
	if c.VID.ok {
		le.PutUint16(b[0:], c.VID.v)
	}
	if c.SSVID.ok {
		le.PutUint16(b[2:], c.SSVID.v)
	}
	if c.SN.ok {
		setASCII(b, 4, 24, c.SN.v)
	}
	if c.MN.ok {
		setASCII(b, 24, 64, c.MN.v)
	}
	if c.FR.ok {
		setASCII(b, 64, 72, c.FR.v)
	}
	if c.OUI.ok {
		b[73], b[74], b[75] = byte(c.OUI.v), byte(c.OUI.v>>8), byte(c.OUI.v>>16)
	}
	if c.CNTLID.ok {
		le.PutUint16(b[78:], c.CNTLID.v)
	}
	if c.VER.ok {
		le.PutUint32(b[80:], c.VER.v)
	}
	if c.LPA.ok {
		b[261] = c.LPA.v
	}
	if c.TNVMCAP.ok {
		le.PutUint64(b[280:], c.TNVMCAP.v) // high 64 bits stay zero
	}
	if c.NN.ok {
		le.PutUint32(b[516:], c.NN.v)
	}
	return b
}

func encodeNS(n nsRec) []byte {
	b := make([]byte, 4096)
	le := binary.LittleEndian
	if n.NSZE.ok {
		le.PutUint64(b[0:], n.NSZE.v)
	}
	if n.NCAP.ok {
		le.PutUint64(b[8:], n.NCAP.v)
	}
	if n.NUSE.ok {
		le.PutUint64(b[16:], n.NUSE.v)
	}
	if n.NSFEAT.ok {
		b[24] = n.NSFEAT.v
	}
	if n.NLBAF.ok {
		b[25] = n.NLBAF.v
	}
	if n.FLBAS.ok {
		b[26] = n.FLBAS.v
	}
	if n.NPWG.ok {
		le.PutUint16(b[64:], n.NPWG.v)
	}
	if n.NOWS.ok {
		le.PutUint16(b[72:], n.NOWS.v)
	}
	for i, f := range n.LBAF {
		le.PutUint32(b[128+4*i:], uint32(f.MS)|uint32(f.LBADS)<<16|uint32(f.RP&3)<<24)
	}
	return b
}
