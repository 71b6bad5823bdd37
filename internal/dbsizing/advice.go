package dbsizing

// SlotOption is one slot size the advice offers: the slot that keeps L0..Level on the fast
// tier, and what a fast device of the given size holds at that size.
type SlotOption struct {
	Level     int
	SlotBytes uint64
	// SlotsFit is how many such slots the fast device holds.
	SlotsFit uint64
	// AllFit: every OSD of the device gets such a slot.
	AllFit bool
}

// Advice is the slot sizes for L0..L(n-2) (the last level is never meant for the fast tier)
// with what a fast device of fastBytes holds of each, for osds OSDs sharing it, and the
// deepest level all of them can keep on it (-1: not even WAL and L0).
type Advice struct {
	Options []SlotOption
	// Best is the deepest level every OSD keeps on the fast tier if the slots were resized
	// to that option's size.
	Best int
	// Current is the deepest level the current slot keeps (-1: not even WAL and L0).
	Current int
}

// Advise computes the slot options for levels l, a fast device of fastBytes shared by osds
// OSDs, and the current slot size.
func Advise(l Levels, fastBytes uint64, osds int, slotBytes uint64) Advice {
	a := Advice{Best: -1, Current: l.DeepestLevel(slotBytes)}
	if osds < 1 {
		osds = 1
	}
	for k := 0; k < l.NumLevels-1; k++ {
		s := l.SlotBytes(k)
		o := SlotOption{Level: k, SlotBytes: s}
		if s > 0 {
			o.SlotsFit = fastBytes / s
		}
		o.AllFit = o.SlotsFit >= uint64(osds)
		if o.AllFit {
			a.Best = k
		}
		a.Options = append(a.Options, o)
	}
	return a
}
