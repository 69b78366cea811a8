// Package pgscript parses pgbench's script language (SQL commands and
// backslash meta-commands) and evaluates its expression language, as
// PostgreSQL's pgbench documents them. Parsing is a pure function of the
// text; evaluation needs only variables and a random source.
package pgscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the type of a Value.
type Kind uint8

// Value kinds, as pgbench's PgBenchValueType.
const (
	Null Kind = iota
	Bool
	Int
	Double
	String
)

// Value is a variable's or an expression's value. String values come from
// query results (\gset, \aset) and --define, and are converted when an
// expression uses them.
type Value struct {
	K Kind
	I int64 // Int; Bool as 0/1
	F float64
	S string
}

// IntV, DoubleV, BoolV and StringV make values.
func IntV(i int64) Value      { return Value{K: Int, I: i} }
func DoubleV(f float64) Value { return Value{K: Double, F: f} }
func BoolV(b bool) Value {
	if b {
		return Value{K: Bool, I: 1}
	}
	return Value{K: Bool}
}
func StringV(s string) Value { return Value{K: String, S: s} }

// Text renders v as pgbench substitutes it into SQL (getVariable):
// doubles with 15 significant digits (%.15g) and infinities and NaN as
// PostgreSQL spells them (Infinity, -Infinity, NaN), booleans as
// true/false, null as NULL.
func (v Value) Text() string {
	switch v.K {
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Double:
		return string(appendDouble(nil, v.F))
	case Bool:
		if v.I != 0 {
			return "true"
		}
		return "false"
	case String:
		return v.S
	}
	return "NULL"
}

// appendDouble appends f as pgbench writes a double.
func appendDouble(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f != f:
		return append(b, "NaN"...)
	}
	return strconv.AppendFloat(b, f, 'g', 15, 64)
}

// AppendText appends v.Text() to b without allocating for numbers.
func (v Value) AppendText(b []byte) []byte {
	switch v.K {
	case Int:
		return strconv.AppendInt(b, v.I, 10)
	case Double:
		return appendDouble(b, v.F)
	}
	return append(b, v.Text()...)
}

// typeName is pgbench's valueTypeName, for coercion errors.
func (v Value) typeName() string {
	switch v.K {
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case Int:
		return "int"
	case Double:
		return "double"
	}
	return "string"
}

// typed converts a string value to the null, boolean, number it spells,
// as pgbench's makeVariableValue does: "null"; prefixes of true, yes,
// false and no, and on, off, of; an integer; a double.
func (v Value) typed() (Value, error) {
	if v.K != String {
		return v, nil
	}
	s := v.S
	if s == "" {
		return v, fmt.Errorf("malformed variable value \"\" (empty)")
	}
	if strings.EqualFold(s, "null") {
		return Value{}, nil
	}
	if b, ok := parseBool(s); ok {
		return BoolV(b), nil
	}
	t := strings.TrimSpace(s)
	if isAnInt(t) {
		i, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64)
		if err != nil {
			return v, fmt.Errorf("malformed variable value %q: bigint out of range", v.S)
		}
		return IntV(i), nil
	}
	// An out-of-range double (1e400) is malformed, as pgbench's strtod
	// check has it.
	if f, err := strconv.ParseFloat(strings.TrimLeft(s, " \t\n\r\f\v"), 64); err == nil {
		return DoubleV(f), nil
	}
	return v, fmt.Errorf("malformed variable value %q", v.S)
}

// isAnInt is pgbench's is_an_int: an optional sign and digits (the
// caller trims spaces).
func isAnInt(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// parseBool accepts what pgbench's makeVariableValue takes for a
// boolean: any prefix of true, yes, false or no (case-insensitive), and
// on, off and of.
func parseBool(s string) (bool, bool) {
	l := strings.ToLower(s)
	switch {
	case strings.HasPrefix("true", l), strings.HasPrefix("yes", l), l == "on":
		return true, true
	case strings.HasPrefix("false", l), strings.HasPrefix("no", l), l == "off", l == "of":
		return false, true
	}
	return false, false
}

// asInt is pgbench's coerceToInt: a double is rounded to the nearest
// integer (rint: halves to even).
func (v Value) asInt() (int64, error) {
	if v.K == Int {
		return v.I, nil
	}
	v, err := v.typed()
	if err != nil {
		return 0, err
	}
	switch v.K {
	case Int:
		return v.I, nil
	case Double:
		f := math.RoundToEven(v.F)
		if f != f || f < -9.2233720368547758e18 || f >= 9.2233720368547758e18 {
			return 0, fmt.Errorf("double to int overflow for %f", f)
		}
		return int64(f), nil
	}
	return 0, fmt.Errorf("cannot coerce %s to int", v.typeName())
}

// asDouble is pgbench's coerceToDouble.
func (v Value) asDouble() (float64, error) {
	switch v.K {
	case Double:
		return v.F, nil
	case Int:
		return float64(v.I), nil
	}
	v, err := v.typed()
	if err != nil {
		return 0, err
	}
	switch v.K {
	case Int:
		return float64(v.I), nil
	case Double:
		return v.F, nil
	}
	return 0, fmt.Errorf("cannot coerce %s to double", v.typeName())
}

// asBool is pgbench's coerceToBool: only a boolean is one (NOT 0.0 is
// an error).
func (v Value) asBool() (bool, error) {
	v, err := v.typed()
	if err != nil {
		return false, err
	}
	if v.K == Bool {
		return v.I != 0, nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", v.typeName())
}

// Truthy reports whether v is true as a condition of \if or CASE WHEN
// (pgbench's valueTruth): NULL is false, numbers are true when non-zero.
func (v Value) Truthy() (bool, error) {
	v, err := v.typed()
	if err != nil {
		return false, err
	}
	switch v.K {
	case Bool, Int:
		return v.I != 0, nil
	case Double:
		return v.F != 0, nil
	}
	return false, nil
}
