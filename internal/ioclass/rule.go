package ioclass

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// The two categories the kernel sorts rule errors into, with the text casadm
// prints for each (KCAS_ERR_CLS_RULE_UNKNOWN_CONDITION / _INVALID_SYNTAX);
// capitalised because they are casadm's exact words.
var (
	ErrUnknownCondition = errors.New("Unexpected classification rule condition")
	ErrInvalidSyntax    = errors.New("Invalid classification rule syntax")
)

// RuleError is a rule the kernel refuses. errors.Is(err, ErrUnknownCondition)
// or ErrInvalidSyntax tells which category casadm reports.
type RuleError struct {
	// Category is ErrUnknownCondition or ErrInvalidSyntax.
	Category error
	// Condition is the 1-based position of the condition at fault.
	Condition int
	// Token is that condition's text.
	Token string
	// KernelLog is what the kernel logs after "[Open-CAS] [Classifier] ",
	// "" when it logs nothing (unknown conditions).
	KernelLog string
}

func (e *RuleError) Error() string {
	msg := fmt.Sprintf("%s: condition %d %q", e.Category, e.Condition, e.Token)
	if e.KernelLog != "" {
		msg += ": " + strings.TrimSpace(e.KernelLog)
	}
	return msg
}

func (e *RuleError) Unwrap() error { return e.Category }

// Rule is one class's rule in evaluable form.
type Rule struct {
	text  string
	conds []condition
}

// condition is one parsed condition; and says it joins the running result
// with '&' (the first condition always joins with '|').
type condition struct {
	kind  condKind
	and   bool
	op    numOp
	num   uint64
	str   string
	write bool
}

// String returns the rule's text.
func (r Rule) String() string { return r.text }

// Done reports whether the rule contains done: matching it stops
// classification.
func (r Rule) Done() bool {
	for _, c := range r.conds {
		if c.kind == condDone {
			return true
		}
	}
	return false
}

// Len is the number of conditions.
func (r Rule) Len() int { return len(r.conds) }

// ParseRule parses a rule the way the kernel does when casadm loads it, and
// returns a *RuleError with the kernel's category when the kernel would refuse
// it. It models v26 (a trailing '&' or '|' is an error; v25 ignored it).
//
// Syntax: conditions separated by '&' or '|'; a condition is a keyword,
// optionally followed by ':' and an operand that runs to the next '&' or '|'.
// Conditions are built left to right and the first error wins. An empty rule
// is no rule: the class exists but never matches.
func ParseRule(text string) (Rule, error) {
	r := Rule{text: text}
	s := text
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // the kernel sees a C string
	}
	and := false
	for n := 1; s != ""; n++ {
		tok, rest, sep := s, "", byte(0)
		if i := strings.IndexAny(s, "&|"); i >= 0 {
			tok, sep, rest = s[:i], s[i], s[i+1:]
		}
		c, err := parseCondition(tok)
		if err != nil {
			err.Condition, err.Token = n, tok
			return Rule{}, err
		}
		c.and = and
		r.conds = append(r.conds, c)
		if sep != 0 && rest == "" {
			return Rule{}, &RuleError{Category: ErrInvalidSyntax, Condition: n + 1,
				KernelLog: fmt.Sprintf("Missing condition after '%c' operator", sep)}
		}
		s, and = rest, sep == '&'
	}
	return r, nil
}

func syntaxErr(log string) *RuleError {
	return &RuleError{Category: ErrInvalidSyntax, KernelLog: log}
}

// parseCondition builds one condition from "keyword[:operand]".
func parseCondition(tok string) (condition, *RuleError) {
	name, operand, hasOperand := strings.Cut(tok, ":")
	kind, ok := keywords[name]
	if !ok {
		return condition{}, &RuleError{Category: ErrUnknownCondition}
	}
	c := condition{kind: kind}
	switch conditions[kind].operand {
	case operandNone:
		if hasOperand {
			return c, syntaxErr("Unexpected operand in condition")
		}
	case operandNumeric:
		if operand == "" {
			return c, syntaxErr("Missing numeric condition operand")
		}
		value := operand
		if opName, v, found := strings.Cut(operand, ":"); found {
			if c.op, ok = parseOp(opName); !ok {
				return c, syntaxErr("Invalid numeric operator ")
			}
			value = v
		}
		if c.num, ok = kstrtou64(value); !ok {
			return c, syntaxErr("Invalid numeric operand")
		}
		if kind == condCoreID && c.num > MaxCoreID {
			return c, syntaxErr("Core id have to be within <0-4095> range")
		}
	case operandString:
		switch {
		case !hasOperand:
			return c, syntaxErr("Missing string specifier")
		case operand == "":
			return c, syntaxErr("String specifier is empty")
		case len(operand) > MaxStringOperand:
			return c, syntaxErr("String specifier is too long")
		}
		c.str = operand
	case operandDirectory:
		if operand == "" {
			return c, syntaxErr("Missing directory specifier")
		}
		// The kernel resolves the path to an inode (kern_path, from a work
		// item whose working directory is /); compare cleaned paths instead.
		c.str = path.Clean("/" + operand)
	case operandDirection:
		switch operand {
		case "read":
		case "write":
			c.write = true
		default:
			return c, syntaxErr(fmt.Sprintf("Invalid IO direction specifier '%s'", operand))
		}
	}
	return c, nil
}

// kstrtou64 accepts what the kernel's kstrtou64(s, 10) accepts: an optional
// '+', decimal digits, an optional trailing newline, no overflow.
func kstrtou64(s string) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 || v > (^uint64(0)-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	return v, true
}
