// Package pgscript parses pgbench's script language (SQL commands and
// backslash meta-commands) and evaluates its expression language, as
// PostgreSQL's pgbench documents them. Parsing is a pure function of the
// text; evaluation needs only variables and a random source.
package pgscript

import (
	"fmt"
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

// Text renders v as pgbench substitutes it into SQL: doubles with 15
// significant digits (%.15g), booleans as true/false, null as empty.
func (v Value) Text() string {
	switch v.K {
	case Int:
		return strconv.FormatInt(v.I, 10)
	case Double:
		return strconv.FormatFloat(v.F, 'g', 15, 64)
	case Bool:
		if v.I != 0 {
			return "true"
		}
		return "false"
	case String:
		return v.S
	}
	return ""
}

// AppendText appends v.Text() to b without allocating for numbers.
func (v Value) AppendText(b []byte) []byte {
	switch v.K {
	case Int:
		return strconv.AppendInt(b, v.I, 10)
	case Double:
		return strconv.AppendFloat(b, v.F, 'g', 15, 64)
	}
	return append(b, v.Text()...)
}

// typed converts a string value to the number, boolean or null it spells,
// as pgbench's makeVariableValue does.
func (v Value) typed() (Value, error) {
	if v.K != String {
		return v, nil
	}
	s := strings.TrimSpace(v.S)
	if strings.EqualFold(s, "null") {
		return Value{}, nil
	}
	if b, ok := parseBool(s); ok {
		return BoolV(b), nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return IntV(i), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return DoubleV(f), nil
	}
	return v, fmt.Errorf("malformed variable value %q", v.S)
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "yes", "on":
		return true, true
	case "false", "f", "no", "off":
		return false, true
	}
	return false, false
}

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
		if v.F != v.F || v.F < -9.2233720368547758e18 || v.F >= 9.2233720368547758e18 {
			return 0, fmt.Errorf("double to int overflow for %s", v.Text())
		}
		return int64(v.F), nil
	case Bool:
		return 0, fmt.Errorf("cannot coerce boolean to int")
	}
	return 0, fmt.Errorf("cannot coerce NULL to int")
}

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
	case Bool:
		return 0, fmt.Errorf("cannot coerce boolean to double")
	}
	return 0, fmt.Errorf("cannot coerce NULL to double")
}

// asBool follows pgbench's coerceToBool: numbers are true when non-zero.
func (v Value) asBool() (bool, error) {
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
	return false, fmt.Errorf("cannot coerce NULL to boolean")
}

// Truthy reports whether v is true as a condition of \if.
func (v Value) Truthy() (bool, error) { return v.asBool() }
