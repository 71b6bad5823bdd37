package ioclass

import (
	"errors"
	"strings"
	"testing"
)

// TestParseRuleKernelErrors is KERNEL-FACTS.md's table: what the real
// kernel (v26.03.2) refused, with casadm's category and the kernel's log line.
func TestParseRuleKernelErrors(t *testing.T) {
	tests := []struct {
		rule     string
		category error
		log      string
	}{
		{"bogus:1&done", ErrUnknownCondition, ""},
		{"request_size:le:4096&&done", ErrUnknownCondition, ""},
		{"request_size:xx:5&done", ErrInvalidSyntax, "Invalid numeric operator "},
		{"lba:ge:abc&done", ErrInvalidSyntax, "Invalid numeric operand"},
		{"io_direction:sideways&done", ErrInvalidSyntax, "Invalid IO direction specifier 'sideways'"},
		{"request_size&done", ErrInvalidSyntax, "Missing numeric condition operand"},
		{"process_name:" + strings.Repeat("x", 300), ErrInvalidSyntax, "String specifier is too long"},
		{"core_id:eq:99999&done", ErrInvalidSyntax, "Core id have to be within <0-4095> range"},
		{"request_size:le:4096&", ErrInvalidSyntax, "Missing condition after '&' operator"},
		{"io_direction:write|", ErrInvalidSyntax, "Missing condition after '|' operator"},
	}
	for _, tc := range tests {
		_, err := ParseRule(tc.rule)
		var re *RuleError
		if !errors.As(err, &re) || !errors.Is(err, tc.category) || re.KernelLog != tc.log {
			t.Errorf("ParseRule(%.40q) = %v, want %v with kernel log %q", tc.rule, err, tc.category, tc.log)
		}
	}
}

// TestParseRuleMore covers the rest of the kernel's parser: which condition
// is blamed, what each operand kind takes.
func TestParseRuleMore(t *testing.T) {
	tests := []struct {
		rule     string
		category error // nil = accepted
		cond     int
	}{
		{"metadata&done", nil, 0},
		{"", nil, 0}, // no rule: the class never matches
		{"done", nil, 0},
		{"request_size:4096", nil, 0}, // no operator = eq
		{"request_size:+4096", nil, 0},
		{"request_size:18446744073709551615", nil, 0},
		{"request_size:18446744073709551616", ErrInvalidSyntax, 1},
		{"request_size:-1", ErrInvalidSyntax, 1},
		{"request_size:0x10", ErrInvalidSyntax, 1},
		{"request_size:le:", ErrInvalidSyntax, 1},
		{"request_size:", ErrInvalidSyntax, 1},
		{"request_size:le:4096:1", ErrInvalidSyntax, 1},
		{"request_size:LE:4096", ErrInvalidSyntax, 1},
		{"core_id:4095", nil, 0},
		{"core_id:ge:4096", ErrInvalidSyntax, 1},
		{"io_class:99", nil, 0}, // no range check in the kernel
		{"metadata:", ErrInvalidSyntax, 1},
		{"done:1", ErrInvalidSyntax, 1},
		{"process_name", ErrInvalidSyntax, 1},
		{"process_name:", ErrInvalidSyntax, 1},
		{"process_name:" + strings.Repeat("x", 255), nil, 0},
		{"process_name:a:b", nil, 0}, // the operand runs to the next & or |
		{"directory:", ErrInvalidSyntax, 1},
		{"directory:" + strings.Repeat("d", 300), nil, 0}, // no length limit on paths
		{"io_direction", ErrInvalidSyntax, 1},
		{"io_direction:READ", ErrInvalidSyntax, 1},
		{"wlth:2", nil, 0},
		{"unclassified", ErrUnknownCondition, 1}, // only class 0's name, never parsed
		{"&done", ErrUnknownCondition, 1},
		{"metadata|&done", ErrUnknownCondition, 2},
		{"bogus&request_size:xx", ErrUnknownCondition, 1}, // first error wins
		{"request_size:xx:1&bogus", ErrInvalidSyntax, 1},  // first error wins
		{"metadata&direct&lba:zz", ErrInvalidSyntax, 3},   // blamed condition
		{"Metadata", ErrUnknownCondition, 1},              // keywords are case-sensitive
		{"metadata &done", ErrUnknownCondition, 1},        // no trimming
		{"metadata\x00garbage&&", nil, 0},                 // the kernel sees a C string
		{"request_size:1\n", nil, 0},                      // kstrtou64 takes one trailing newline
		{"request_size:le:4096&done|direct&metadata", nil, 0},
	}
	for _, tc := range tests {
		_, err := ParseRule(tc.rule)
		if tc.category == nil {
			if err != nil {
				t.Errorf("ParseRule(%.40q): %v", tc.rule, err)
			}
			continue
		}
		var re *RuleError
		if !errors.As(err, &re) || !errors.Is(err, tc.category) || re.Condition != tc.cond {
			t.Errorf("ParseRule(%.40q) = %v, want %v at condition %d", tc.rule, err, tc.category, tc.cond)
		}
	}
}

func TestRuleErrorText(t *testing.T) {
	_, err := ParseRule("metadata&lba:ge:abc&done")
	want := `Invalid classification rule syntax: condition 2 "lba:ge:abc": Invalid numeric operand`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
