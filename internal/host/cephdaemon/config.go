package cephdaemon

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseConfigGet reads `config get <option>`: {"<option>": "<value>"}.
func ParseConfigGet(data []byte, option string) (string, error) {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("config get %s: %w", option, err)
	}
	v, ok := m[option]
	if !ok {
		return "", fmt.Errorf("config get %s: the reply has no %q", option, option)
	}
	return v, nil
}

// ParseRocksDBOptions splits a RocksDB options string ("a=1,b=2;c={x=1;y=2}") into its
// top-level key=value pairs; a nested {...} value stays whole. Later pairs override earlier
// ones, as RocksDB applies them.
func ParseRocksDBOptions(s string) (map[string]string, error) {
	out := map[string]string{}
	depth, start := 0, 0
	flush := func(end int) error {
		part := strings.TrimSpace(s[start:end])
		start = end + 1
		if part == "" {
			return nil
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("RocksDB options: %q is not key=value", part)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("RocksDB options: unbalanced } at byte %d", i)
			}
		case ',', ';':
			if depth == 0 {
				if err := flush(i); err != nil {
					return nil, err
				}
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("RocksDB options: unbalanced { in %q", s)
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	return out, nil
}
