package pgscript

import (
	"fmt"
	"strconv"
	"strings"
)

// Expr is a parsed pgbench expression (the argument of \set).
type Expr struct {
	root node
	vars []string
	refs []*varNode // the variable references, for Table.Bind
}

// Vars lists the variables the expression reads, in order of appearance.
func (e *Expr) Vars() []string { return e.vars }

// Eval evaluates the expression with the variables and random source of s.
func (e *Expr) Eval(s *State) (Value, error) { return e.root.eval(s) }

type node interface {
	eval(s *State) (Value, error)
	// pure reports whether the node's value is fixed at parse time.
	pure() bool
}

type constNode struct{ v Value }
type varNode struct {
	name string
	slot int // -1 until Table.Bind
}
type unaryNode struct {
	op string
	x  node
}
type binNode struct {
	op   string
	code opCode
	l, r node
}

// opCode is a binary operator, switched on at run time.
type opCode uint8

const (
	opAnd opCode = iota
	opOr
	opAdd
	opSub
	opMul
	opDiv
	opMod
	opBitAnd
	opBitOr
	opBitXor
	opShl
	opShr
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
)

var opCodes = map[string]opCode{"and": opAnd, "or": opOr, "+": opAdd, "-": opSub, "*": opMul, "/": opDiv,
	"%": opMod, "&": opBitAnd, "|": opBitOr, "#": opBitXor, "<<": opShl, ">>": opShr,
	"=": opEq, "<>": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe}

// newBin makes a binary node of one of opCodes' operators.
func newBin(op string, l, r node) *binNode {
	c, ok := opCodes[op]
	if !ok {
		panic("pgscript: unknown operator " + op)
	}
	return &binNode{op: op, code: c, l: l, r: r}
}

type funcNode struct {
	f    *function
	args []node
}

// randomNode is random(lo, hi), pgbench's most used function, called
// without an argument list.
type randomNode struct{ lo, hi node }
type caseNode struct {
	whens, thens []node
	els          node
}

func (n *constNode) pure() bool { return true }
func (n *varNode) pure() bool   { return false }
func (n *unaryNode) pure() bool { return n.x.pure() }
func (n *binNode) pure() bool   { return n.l.pure() && n.r.pure() }
func (n *funcNode) pure() bool {
	if n.f.random {
		return false
	}
	for _, a := range n.args {
		if !a.pure() {
			return false
		}
	}
	return true
}
func (n *randomNode) pure() bool { return false }
func (n *caseNode) pure() bool {
	for i := range n.whens {
		if !n.whens[i].pure() || !n.thens[i].pure() {
			return false
		}
	}
	return n.els == nil || n.els.pure()
}

// fold replaces n's pure sub-expressions by their values (those whose
// evaluation fails are left to fail at run time).
func fold(n node) node {
	switch t := n.(type) {
	case *constNode, *varNode:
		return n
	case *unaryNode:
		t.x = fold(t.x)
	case *binNode:
		t.l, t.r = fold(t.l), fold(t.r)
	case *funcNode:
		for i := range t.args {
			t.args[i] = fold(t.args[i])
		}
	case *randomNode:
		t.lo, t.hi = fold(t.lo), fold(t.hi)
	case *caseNode:
		for i := range t.whens {
			t.whens[i], t.thens[i] = fold(t.whens[i]), fold(t.thens[i])
		}
		if t.els != nil {
			t.els = fold(t.els)
		}
	}
	if n.pure() {
		if v, err := n.eval(nil); err == nil {
			return &constNode{v}
		}
	}
	return n
}

// token kinds of the expression lexer.
type tokKind int

const (
	tEOF tokKind = iota
	tInt
	tDouble
	tVar
	tIdent
	tOp
)

type token struct {
	k   tokKind
	s   string
	pos int
}

func lexExpr(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		case c == ':':
			j := i + 1
			for j < len(src) && isVarChar(src[j]) && (j > i+1 || !isDigit(src[j])) {
				j++
			}
			if j == i+1 {
				return nil, fmt.Errorf("unexpected character ':' at column %d", i+1)
			}
			toks = append(toks, token{tVar, src[i+1 : j], i})
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && isDigit(src[j]) {
				j++
			}
			k := tInt
			if j < len(src) && src[j] == '.' {
				k = tDouble
				j++
				for j < len(src) && isDigit(src[j]) {
					j++
				}
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				e := j + 1
				if e < len(src) && (src[e] == '+' || src[e] == '-') {
					e++
				}
				if e < len(src) && isDigit(src[e]) {
					k = tDouble
					j = e
					for j < len(src) && isDigit(src[j]) {
						j++
					}
				}
			}
			toks = append(toks, token{k, src[i:j], i})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
				j++
			}
			toks = append(toks, token{tIdent, strings.ToLower(src[i:j]), i})
			i = j
		default:
			op := ""
			for _, o := range []string{"<=", ">=", "<>", "!=", "<<", ">>"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("+-*/%()<>=,&|#~", rune(c)) {
					return nil, fmt.Errorf("unexpected character %q at column %d", c, i+1)
				}
				op = src[i : i+1]
			}
			toks = append(toks, token{tOp, op, i})
			i += len(op)
		}
	}
	return append(toks, token{tEOF, "", len(src)}), nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isVarChar(c byte) bool    { return isIdentStart(c) || isDigit(c) || c >= 0x80 }

// ParseExpr parses pgbench's expression language. Sub-expressions without
// variables or random functions are computed now when they can be; one
// that fails (1/0) is left to fail when it is evaluated, as pgbench
// evaluates everything at run time: in a branch never taken, it never
// fails.
func ParseExpr(src string) (*Expr, error) {
	toks, err := lexExpr(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks}
	n, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.k != tEOF {
		return nil, fmt.Errorf("syntax error at %q (column %d)", t.s, t.pos+1)
	}
	n = fold(n)
	return &Expr{root: n, vars: p.vars, refs: p.refs}, nil
}

type exprParser struct {
	toks  []token
	i     int
	vars  []string
	refs  []*varNode
	depth int
}

const maxDepth = 200

func (p *exprParser) peek() token { return p.toks[p.i] }
func (p *exprParser) next() token { t := p.toks[p.i]; p.i++; return t }
func (p *exprParser) isOp(s string) bool {
	t := p.peek()
	return t.k == tOp && t.s == s
}
func (p *exprParser) isKw(s string) bool {
	t := p.peek()
	return t.k == tIdent && t.s == s
}
func (p *exprParser) errAt(t token) error {
	if t.k == tEOF {
		return fmt.Errorf("syntax error: unexpected end of expression")
	}
	return fmt.Errorf("syntax error at %q (column %d)", t.s, t.pos+1)
}

// Precedence, lowest first, as pgbench's exprparse.y: OR (right), AND
// (right), NOT (right), IS/ISNULL/NOTNULL, comparisons (non-associative),
// bit operators | # & << >> (left), + - (left), * / % (left), unary.
func (p *exprParser) parseOr() (node, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	if p.isKw("or") {
		p.next()
		r, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		return newBin("or", l, r), nil
	}
	return l, nil
}

func (p *exprParser) parseAnd() (node, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	if p.isKw("and") {
		p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		return newBin("and", l, r), nil
	}
	return l, nil
}

func (p *exprParser) parseNot() (node, error) {
	if p.isKw("not") {
		p.next()
		p.depth++
		if p.depth > maxDepth {
			return nil, fmt.Errorf("expression nested too deeply")
		}
		x, err := p.parseNot()
		p.depth--
		if err != nil {
			return nil, err
		}
		return &unaryNode{"not", x}, nil
	}
	return p.parseIs()
}

func (p *exprParser) parseIs() (node, error) {
	x, err := p.parseCmp()
	if err != nil {
		return nil, err
	}
	switch {
	case p.isKw("isnull"):
		p.next()
		return &unaryNode{"isnull", x}, nil
	case p.isKw("notnull"):
		p.next()
		return &unaryNode{"not", &unaryNode{"isnull", x}}, nil
	case p.isKw("is"):
		p.next()
		neg := false
		if p.isKw("not") {
			p.next()
			neg = true
		}
		t := p.next()
		var n node
		switch {
		case t.k == tIdent && t.s == "null":
			n = &unaryNode{"isnull", x}
		case t.k == tIdent && (t.s == "true" || t.s == "false"):
			n = &unaryNode{"is" + t.s, x}
		default:
			return nil, p.errAt(t)
		}
		if neg {
			n = &unaryNode{"not", n}
		}
		return n, nil
	}
	return x, nil
}

func (p *exprParser) parseCmp() (node, error) {
	l, err := p.parseBit()
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if t.k == tOp {
		switch t.s {
		case "=", "<>", "!=", "<", "<=", ">", ">=":
			p.next()
			r, err := p.parseBit()
			if err != nil {
				return nil, err
			}
			op := t.s
			if op == "!=" {
				op = "<>"
			}
			return newBin(op, l, r), nil
		}
	}
	return l, nil
}

func (p *exprParser) parseBit() (node, error) {
	l, err := p.parseAdd()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.k != tOp || (t.s != "|" && t.s != "#" && t.s != "&" && t.s != "<<" && t.s != ">>") {
			return l, nil
		}
		p.next()
		r, err := p.parseAdd()
		if err != nil {
			return nil, err
		}
		l = newBin(t.s, l, r)
	}
}

func (p *exprParser) parseAdd() (node, error) {
	l, err := p.parseMul()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().s
		r, err := p.parseMul()
		if err != nil {
			return nil, err
		}
		l = newBin(op, l, r)
	}
	return l, nil
}

func (p *exprParser) parseMul() (node, error) {
	l, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.next().s
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		l = newBin(op, l, r)
	}
	return l, nil
}

func (p *exprParser) parseUnary() (node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, fmt.Errorf("expression nested too deeply")
	}
	switch {
	case p.isOp("+"):
		p.next()
		return p.parseUnary()
	case p.isOp("-"):
		p.next()
		// -9223372036854775808 is a valid literal.
		if t := p.peek(); t.k == tInt && t.s == "9223372036854775808" {
			p.next()
			return &constNode{IntV(-9223372036854775808)}, nil
		}
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return newBin("-", &constNode{IntV(0)}, x), nil
	case p.isOp("~"):
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return newBin("#", &constNode{IntV(-1)}, x), nil
	}
	return p.parsePrimary()
}

func (p *exprParser) parsePrimary() (node, error) {
	t := p.next()
	switch t.k {
	case tInt:
		i, err := strconv.ParseInt(t.s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bigint constant overflow: %s", t.s)
		}
		return &constNode{IntV(i)}, nil
	case tDouble:
		f, err := strconv.ParseFloat(t.s, 64)
		if err != nil {
			return nil, fmt.Errorf("double constant overflow: %s", t.s)
		}
		return &constNode{DoubleV(f)}, nil
	case tVar:
		p.vars = append(p.vars, t.s)
		r := &varNode{name: t.s, slot: -1}
		p.refs = append(p.refs, r)
		return r, nil
	case tOp:
		if t.s == "(" {
			x, err := p.parseOr()
			if err != nil {
				return nil, err
			}
			if !p.isOp(")") {
				return nil, p.errAt(p.peek())
			}
			p.next()
			return x, nil
		}
	case tIdent:
		switch t.s {
		case "true":
			return &constNode{BoolV(true)}, nil
		case "false":
			return &constNode{BoolV(false)}, nil
		case "null":
			return &constNode{}, nil
		case "case":
			return p.parseCase()
		}
		if !p.isOp("(") {
			return nil, p.errAt(t)
		}
		p.next()
		f, ok := functions[t.s]
		if !ok {
			return nil, fmt.Errorf("unexpected function name %q", t.s)
		}
		var args []node
		if !p.isOp(")") {
			for {
				a, err := p.parseOr()
				if err != nil {
					return nil, err
				}
				args = append(args, a)
				if p.isOp(",") {
					p.next()
					continue
				}
				break
			}
		}
		if !p.isOp(")") {
			return nil, p.errAt(p.peek())
		}
		p.next()
		if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
			if f.max < 0 {
				return nil, fmt.Errorf("at least one argument expected (%s)", t.s)
			}
			return nil, fmt.Errorf("unexpected number of arguments (%s)", t.s)
		}
		if f.seeded && len(args) < f.max {
			// hash(v) and permute(v, size) read :default_seed, as
			// pgbench rewrites them.
			p.vars = append(p.vars, "default_seed")
			r := &varNode{name: "default_seed", slot: -1}
			p.refs = append(p.refs, r)
			args = append(args, r)
		}
		if f.name == "random" {
			return &randomNode{args[0], args[1]}, nil
		}
		return &funcNode{f, args}, nil
	}
	return nil, p.errAt(t)
}

func (p *exprParser) parseCase() (node, error) {
	c := &caseNode{}
	for p.isKw("when") {
		p.next()
		w, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if !p.isKw("then") {
			return nil, p.errAt(p.peek())
		}
		p.next()
		th, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		c.whens, c.thens = append(c.whens, w), append(c.thens, th)
	}
	if len(c.whens) == 0 {
		return nil, p.errAt(p.peek())
	}
	if p.isKw("else") {
		p.next()
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		c.els = e
	}
	if !p.isKw("end") {
		return nil, p.errAt(p.peek())
	}
	p.next()
	return c, nil
}
