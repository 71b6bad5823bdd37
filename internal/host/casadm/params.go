package casadm

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Param is one row of `casadm -G -n <namespace> ... -o csv`.
type Param struct {
	// Title is the row as printed, e.g. "Wake up time [s]".
	Title string
	// Name and Unit split it: "Wake up time", "s" ("" when there is none).
	Name, Unit string
	Value      string
}

// Params are a namespace's parameters in casadm's order.
type Params []Param

// Get finds a parameter by name or full title.
func (ps Params) Get(name string) (Param, bool) {
	for _, p := range ps {
		if p.Name == name || p.Title == name {
			return p, true
		}
	}
	return Param{}, false
}

// Uint reads a numeric parameter.
func (p Param) Uint() (uint64, error) {
	v, err := strconv.ParseUint(p.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parameter %q: invalid number %q", p.Title, p.Value)
	}
	return v, nil
}

// ParseParams reads `casadm -G ... -o csv`: header "Parameter name,Value",
// one row per parameter.
func ParseParams(r io.Reader) (Params, error) {
	rows, err := readPairs(r, "Parameter name", "Value")
	if err != nil {
		return nil, err
	}
	ps := make(Params, 0, len(rows))
	for _, kv := range rows {
		name, unit := splitTitle(kv[0])
		ps = append(ps, Param{Title: kv[0], Name: name, Unit: unit, Value: kv[1]})
	}
	return ps, nil
}

// CSV writes the parameters as casadm does.
func (ps Params) CSV() string {
	var b strings.Builder
	b.WriteString("Parameter name,Value\n")
	for _, p := range ps {
		b.WriteString(joinCSV(p.Title, p.Value) + "\n")
	}
	return b.String()
}

// readPairs reads a two-column name/value table: titles by name, names
// non-empty and unique.
func readPairs(r io.Reader, nameCol, valueCol string) ([][2]string, error) {
	t, err := readTable(r)
	if err != nil {
		return nil, err
	}
	if err := t.require(nameCol, valueCol); err != nil {
		return nil, err
	}
	if len(t.header) != 2 {
		return nil, &ParseError{Line: 1, Msg: fmt.Sprintf("%d columns, want %s,%s", len(t.header), nameCol, valueCol)}
	}
	seen := map[string]bool{}
	var out [][2]string
	for _, r := range t.rows {
		name := t.get(r, nameCol)
		switch {
		case name == "":
			return nil, t.fieldErr(r, nameCol, "empty name")
		case seen[name]:
			return nil, t.fieldErr(r, nameCol, "%q appears twice", name)
		}
		seen[name] = true
		out = append(out, [2]string{name, t.get(r, valueCol)})
	}
	return out, nil
}
