package pgscript

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CmdKind is the kind of one script command.
type CmdKind uint8

// Command kinds.
const (
	SQL CmdKind = iota
	Set
	Sleep
	If
	Elif
	Else
	Endif
	StartPipeline
	EndPipeline
	// Shell runs Args as a shell command; SetShell stores its output (an
	// integer) in Var.
	Shell
	SetShell
	// SyncPipeline is pgbench 17's \syncpipeline: a sync point inside a
	// pipeline (the statements before it form an implicit transaction of
	// their own and an error skips statements only up to it), sent with
	// the rest at \endpipeline.
	SyncPipeline
)

// Class is a SQL command's statement class, for sysbench-style counts.
type Class uint8

// Statement classes.
const (
	Other Class = iota
	Read
	Write
)

// Part is a piece of a SQL command: literal text, or a :variable.
type Part struct {
	Lit  string
	Var  string // non-empty for a variable reference
	Slot int    // Var's slot (Table.Bind)
}

// Cmd is one command of a script.
type Cmd struct {
	Kind CmdKind
	// Line is the 1-based line the command starts on.
	Line int
	// SQL: the command text, split at :variables; Gset/Aset store the
	// result row into variables named Prefix+column.
	Text   string
	Parts  []Part
	Class  Class
	Gset   bool
	Aset   bool
	Prefix string
	// Set: Var = Expr. Sleep: Expr times Unit. If/Elif: Expr.
	Var  string
	Slot int // Var's slot (Table.Bind)
	Expr *Expr
	Unit int64 // microseconds per unit of \sleep
	// Sleep: the literal duration in units, when Expr is nil... or, with
	// SleepVar, the variable whose value (as pgbench's atoi reads it) is.
	SleepN   int64
	SleepVar string
	// Shell, SetShell: the command's words (":name" a variable, "::x"
	// the text ":x").
	Args []string
	// Err, when set, is the error the command fails with when it runs:
	// what pgbench accepts in a script but refuses at run time (\set of
	// an invalid variable name, pipeline commands out of place).
	Err string
	// Jump is, for If and Elif, the next branch of the chain (an Elif,
	// Else or Endif) to go to when the condition is false; End is, for
	// Elif and Else, the command after Endif (reached when a branch
	// before them was taken).
	Jump, End int
}

// MaxSleep is the longest \sleep: the longest time.Duration (292 years).
// pgbench keeps a sleep in a C int of microseconds and wraps silently past
// 2147 s; dbarena refuses what it cannot represent instead, at parse time
// for a literal and when the command runs for a :variable. The run's end
// wakes a sleep in any case.
const MaxSleep = time.Duration(1<<63 - 1)

// SleepFor is the time a \sleep command waits when its value is n units:
// 0 for n <= 0 (pgbench does not sleep then), an error when n units do not
// fit in MaxSleep.
func (c *Cmd) SleepFor(n int64) (time.Duration, error) {
	unit := max(c.Unit, 1)
	if n <= 0 {
		return 0, nil
	}
	if n > int64(MaxSleep/time.Microsecond)/unit {
		return 0, fmt.Errorf("\\sleep: %d %s is out of range (at most %d s)", n, unitName(unit), MaxSleep/time.Second)
	}
	return time.Duration(n*unit) * time.Microsecond, nil
}

// unitName is the \sleep unit of unit microseconds.
func unitName(unit int64) string {
	switch unit {
	case 1:
		return "us"
	case 1000:
		return "ms"
	}
	return "s"
}

// Script is a parsed pgbench script.
type Script struct {
	Name string
	Cmds []Cmd
}

// Error is a script error with its file and line. Source and Column,
// when Source is set, place it in the command's text as pgbench's "^ error
// found here" does (pgbench's own entry prints them under the error).
type Error struct {
	File   string
	Line   int
	Msg    string
	Source string
	Column int
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Parse reads a pgbench script. name is used in errors (FILE:LINE).
func Parse(name, src string) (*Script, error) {
	p := &scriptParser{name: name, src: src, line: 1}
	if err := p.run(); err != nil {
		return nil, err
	}
	if err := link(name, p.cmds); err != nil {
		return nil, err
	}
	if len(p.cmds) == 0 {
		return nil, &Error{File: name, Line: 1, Msg: fmt.Sprintf("empty command list for script %q", name)}
	}
	return &Script{Name: name, Cmds: p.cmds}, nil
}

type scriptParser struct {
	name string
	src  string
	i    int
	line int
	cmds []Cmd
	// current SQL command
	buf       strings.Builder
	startLine int
	parens    int
}

func (p *scriptParser) errf(line int, f string, a ...any) error {
	return &Error{File: p.name, Line: line, Msg: fmt.Sprintf(f, a...)}
}

func (p *scriptParser) adv(n int) {
	for k := 0; k < n && p.i < len(p.src); k++ {
		if p.src[p.i] == '\n' {
			p.line++
		}
		p.buf.WriteByte(p.src[p.i])
		p.i++
	}
}

// endSQL finishes the SQL command in the buffer, if it has any content.
func (p *scriptParser) endSQL() {
	text := strings.TrimSpace(p.buf.String())
	p.buf.Reset()
	p.parens = 0
	if !hasContent(text) {
		return
	}
	p.cmds = append(p.cmds, Cmd{Kind: SQL, Line: p.startLine, Text: text, Parts: splitVars(text), Class: ClassOf(text)})
}

func (p *scriptParser) run() error {
	src := p.src
	for p.i < len(src) {
		c := src[p.i]
		if p.buf.Len() == 0 || !hasContent(p.buf.String()) {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				p.adv(1)
				continue
			}
			if !hasContent(p.buf.String()) {
				p.startLine = p.line
			}
		}
		switch {
		case c == '\'' || c == '"' || c == '`':
			line := p.line
			// E'...' strings take backslash escapes.
			esc := c == '\'' && p.i > 0 && (src[p.i-1]|0x20) == 'e' && (p.i < 2 || !isVarChar(src[p.i-2]))
			j := p.i + 1
			for {
				k := strings.IndexByte(src[j:], c)
				if esc {
					if b := strings.IndexByte(src[j:], '\\'); b >= 0 && (k < 0 || b < k) {
						j += b + 2
						if j > len(src) {
							return p.errf(line, "unterminated quoted string")
						}
						continue
					}
				}
				if k < 0 {
					return p.errf(line, "unterminated quoted string")
				}
				j += k + 1
				if j < len(src) && src[j] == c {
					j++
					continue
				}
				break
			}
			p.adv(j - p.i)
		case c == '$' && dollarTag(src[p.i:]) != "":
			tag := dollarTag(src[p.i:])
			line := p.line
			k := strings.Index(src[p.i+len(tag):], tag)
			if k < 0 {
				return p.errf(line, "unterminated dollar-quoted string")
			}
			p.adv(len(tag) + k + len(tag))
		case c == '-' && strings.HasPrefix(src[p.i:], "--"):
			k := strings.IndexByte(src[p.i:], '\n')
			if k < 0 {
				k = len(src) - p.i
			}
			// Comments are dropped, as psql's lexer does with -- comments.
			for _, ch := range src[p.i : p.i+k] {
				if ch == '\n' {
					p.line++
				}
			}
			p.i += k
		case c == '/' && strings.HasPrefix(src[p.i:], "/*"):
			line := p.line
			depth, j := 0, p.i
			for j < len(src) {
				if strings.HasPrefix(src[j:], "/*") {
					depth++
					j += 2
				} else if strings.HasPrefix(src[j:], "*/") {
					depth--
					j += 2
					if depth == 0 {
						break
					}
				} else {
					j++
				}
			}
			if depth != 0 {
				return p.errf(line, "unterminated /* comment")
			}
			p.adv(j - p.i)
		case c == '(':
			p.parens++
			p.adv(1)
		case c == ')':
			if p.parens > 0 {
				p.parens--
			}
			p.adv(1)
		case c == ';' && p.parens == 0:
			p.adv(1)
			p.endSQL()
		case c == '\\':
			if strings.HasPrefix(src[p.i:], "\\;") {
				p.i++ // keep the ';' only: a compound command
				p.adv(1)
				continue
			}
			if err := p.meta(); err != nil {
				return err
			}
		default:
			p.adv(1)
		}
	}
	p.endSQL()
	return nil
}

// hasContent reports whether SQL text has more than spaces and comments.
func hasContent(s string) bool {
	for {
		s = strings.TrimLeft(s, " \t\r\n;")
		switch {
		case strings.HasPrefix(s, "/*"):
			k := strings.Index(s, "*/")
			if k < 0 {
				return true
			}
			s = s[k+2:]
		default:
			return s != ""
		}
	}
}

func dollarTag(s string) string {
	if len(s) < 2 || s[0] != '$' {
		return ""
	}
	j := 1
	for j < len(s) && (isIdentStart(s[j]) || (j > 1 && isDigit(s[j]))) {
		j++
	}
	if j < len(s) && s[j] == '$' {
		return s[:j+1]
	}
	return ""
}

// meta reads one backslash meta-command, to the end of its line (lines
// ending in a backslash continue).
func (p *scriptParser) meta() error {
	line := p.line
	src := p.src
	start := p.i
	j := p.i + 1
	for j < len(src) && (isIdentStart(src[j]) || isDigit(src[j])) {
		j++
	}
	name := strings.ToLower(src[p.i+1 : j])
	var rest strings.Builder
	for j < len(src) && src[j] != '\n' {
		if src[j] == '\\' && j+1 < len(src) && src[j+1] == '\n' {
			rest.WriteByte(' ')
			j += 2
			p.line++
			continue
		}
		if src[j] == '\\' && j+2 < len(src) && src[j+1] == '\r' && src[j+2] == '\n' {
			rest.WriteByte(' ')
			j += 3
			p.line++
			continue
		}
		rest.WriteByte(src[j])
		j++
	}
	p.i = j
	args := strings.TrimSpace(rest.String())
	if name == "gset" || name == "aset" {
		if len(strings.Fields(args)) > 1 {
			return p.errf(line, "too many arguments in command %q", name)
		}
		text := strings.TrimSpace(p.buf.String())
		if !hasContent(text) {
			return p.errf(line, "\\%s must follow an SQL command", name)
		}
		p.endSQL()
		c := &p.cmds[len(p.cmds)-1]
		c.Gset, c.Aset = name == "gset", name == "aset"
		fields := strings.Fields(args)
		if len(fields) > 1 {
			return p.errf(line, "\\%s takes at most one argument (a prefix)", name)
		}
		if len(fields) == 1 {
			c.Prefix = fields[0]
		}
		return nil
	}
	if hasContent(p.buf.String()) {
		return p.errf(line, "\\%s inside an unfinished SQL command (missing ';' before it?)", name)
	}
	p.buf.Reset()
	c := Cmd{Line: line}
	fields := strings.Fields(args)
	var err error
	switch name {
	case "set":
		if len(fields) < 2 {
			if len(fields) == 0 {
				return p.errf(line, "\\set: missing argument in command \"set\" (a variable name and an expression)")
			}
			return p.errf(line, "\\set %s: syntax error in command \"set\": missing expression", fields[0])
		}
		c.Kind, c.Var = Set, fields[0]
		if !validVarName(c.Var) {
			c.Err = fmt.Sprintf("set: invalid variable name: %q", c.Var)
		}
		exprSrc := strings.TrimSpace(args[strings.Index(args, c.Var)+len(c.Var):])
		if c.Expr, err = ParseExpr(exprSrc); err != nil {
			e := &Error{File: p.name, Line: line, Msg: fmt.Sprintf("\\set %s: %s", c.Var, exprErr("set", err))}
			if strings.HasSuffix(err.Error(), "unexpected end of expression") {
				// pgbench points at the end of the command's line.
				e.Source = strings.TrimRight(src[start:p.i], " \t\r")
				e.Column = len(e.Source)
			}
			return e
		}
	case "sleep":
		if err := p.sleep(&c, fields, line); err != nil {
			return err
		}
	case "shell", "setshell":
		c.Kind = Shell
		if name == "setshell" {
			c.Kind = SetShell
			if len(fields) < 2 {
				return p.errf(line, "missing argument in command \"setshell\"")
			}
			c.Var, fields = fields[0], fields[1:]
			if !validVarName(c.Var) {
				return p.errf(line, "\\setshell: invalid variable name %q", c.Var)
			}
		} else if len(fields) < 1 {
			return p.errf(line, "missing command in command \"shell\"")
		}
		if len(fields)+1+boolInt(name == "setshell") > maxArgs {
			return p.errf(line, "too many arguments in command %q", name)
		}
		c.Args = fields
		for _, a := range fields {
			if len(a) > 1 && a[0] == ':' && a[1] != ':' && !validVarName(a[1:]) {
				return p.errf(line, "\\%s: invalid variable %q", name, a)
			}
		}
	case "if", "elif":
		c.Kind = If
		if name == "elif" {
			c.Kind = Elif
		}
		if args == "" {
			return p.errf(line, "\\%s: syntax error in command %q: missing condition", name, name)
		}
		if c.Expr, err = ParseExpr(args); err != nil {
			return p.errf(line, "\\%s: %s", name, exprErr(name, err))
		}
	case "else", "endif", "startpipeline", "syncpipeline", "endpipeline":
		if args != "" {
			return p.errf(line, "unexpected argument in command %q", name)
		}
		c.Kind = map[string]CmdKind{"else": Else, "endif": Endif, "startpipeline": StartPipeline,
			"syncpipeline": SyncPipeline, "endpipeline": EndPipeline}[name]
	case "":
		return p.errf(line, "invalid command \\")
	default:
		return p.errf(line, "unknown meta-command \\%s: invalid command in command %q", name, name)
	}
	p.cmds = append(p.cmds, c)
	return nil
}

func validVarName(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isVarChar(s[i]) {
			return false
		}
	}
	return true
}

// link matches \if, \elif, \else and \endif and sets their jumps.
func link(name string, cmds []Cmd) error {
	type frame struct {
		branches []int // If, Elif..., Else
		sawElse  bool
	}
	var stack []frame
	pipeline := -1
	for i := range cmds {
		c := &cmds[i]
		if pipeline >= 0 {
			switch {
			case c.Kind == SQL && (c.Gset || c.Aset):
				// pgbench fails when the command runs, not before.
				c.Err = "\\gset is not allowed in pipeline mode"
				if c.Aset {
					c.Err = "\\aset is not allowed in pipeline mode"
				}
			case c.Kind != SQL && c.Kind != Set && c.Kind != EndPipeline && c.Kind != StartPipeline && c.Kind != SyncPipeline:
				return &Error{File: name, Line: c.Line, Msg: "only SQL commands and \\set are supported inside a pipeline"}
			}
		}
		switch c.Kind {
		case If:
			stack = append(stack, frame{branches: []int{i}})
		case Elif, Else:
			if len(stack) == 0 {
				return &Error{File: name, Line: c.Line, Msg: fmt.Sprintf("\\%s without matching \\if", kwName(c.Kind))}
			}
			f := &stack[len(stack)-1]
			if f.sawElse {
				return &Error{File: name, Line: c.Line, Msg: fmt.Sprintf("\\%s after \\else", kwName(c.Kind))}
			}
			f.sawElse = c.Kind == Else
			f.branches = append(f.branches, i)
		case Endif:
			if len(stack) == 0 {
				return &Error{File: name, Line: c.Line, Msg: "\\endif without matching \\if"}
			}
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for k, b := range f.branches {
				next := i
				if k+1 < len(f.branches) {
					next = f.branches[k+1]
				}
				cmds[b].Jump, cmds[b].End = next, i+1
			}
		case StartPipeline:
			if pipeline >= 0 {
				c.Err = "\\startpipeline: already in pipeline mode"
				continue
			}
			pipeline = i
		case SyncPipeline:
			if pipeline < 0 {
				c.Err = "\\syncpipeline: not in pipeline mode"
			}
		case EndPipeline:
			if pipeline < 0 {
				c.Err = "\\endpipeline: not in pipeline mode"
				continue
			}
			pipeline = -1
		}
	}
	if len(stack) > 0 {
		return &Error{File: name, Line: cmds[stack[len(stack)-1].branches[0]].Line, Msg: "\\if without matching \\endif"}
	}
	// A pipeline open at the script's end fails when the end is reached
	// (the worker checks), as in pgbench.
	return nil
}

func kwName(k CmdKind) string {
	if k == Elif {
		return "elif"
	}
	return "else"
}

// splitVars splits SQL text at :name references; "::" is a cast.
func splitVars(s string) []Part {
	var parts []Part
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		if i+1 < len(s) && s[i+1] == ':' {
			for i+1 < len(s) && s[i+1] == ':' {
				i++
			}
			continue
		}
		j := i + 1
		for j < len(s) && isVarChar(s[j]) && (j > i+1 || !isDigit(s[j])) {
			j++
		}
		if j == i+1 {
			continue
		}
		if i > start {
			parts = append(parts, Part{Lit: s[start:i]})
		}
		parts = append(parts, Part{Var: s[i+1 : j]})
		start = j
		i = j - 1
	}
	if start < len(s) {
		parts = append(parts, Part{Lit: s[start:]})
	}
	return parts
}

// ClassOf classifies a statement by its first keyword.
func ClassOf(s string) Class {
	for hasContent(s) {
		s = strings.TrimLeft(s, " \t\r\n(")
		if strings.HasPrefix(s, "/*") {
			s = s[strings.Index(s, "*/")+2:]
			continue
		}
		break
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if len(words) == 0 {
		return Other
	}
	switch strings.ToLower(words[0]) {
	case "select", "with", "show", "values", "table":
		return Read
	case "insert", "update", "delete", "replace", "merge", "copy":
		return Write
	}
	return Other
}

// Branch returns the index of the command to run after the conditional
// command at pc: for \if, the first taken branch of its chain (a false
// condition moves on to the next \elif, \else or \endif); for \elif and
// \else reached after a taken branch, the command after \endif; for
// \endif, the next command.
func (s *Script) Branch(pc int, st *State) (int, error) {
	c := &s.Cmds[pc]
	switch c.Kind {
	case Elif, Else:
		return c.End, nil
	case Endif:
		return pc + 1, nil
	}
	for {
		c = &s.Cmds[pc]
		switch c.Kind {
		case Else, Endif:
			return pc + 1, nil
		}
		st.Command = pc
		v, err := c.Expr.Eval(st)
		if err != nil {
			return 0, &Error{File: s.Name, Line: c.Line, Msg: err.Error()}
		}
		if v.K != Null {
			ok, err := v.Truthy()
			if err != nil {
				return 0, &Error{File: s.Name, Line: c.Line, Msg: err.Error()}
			}
			if ok {
				return pc + 1, nil
			}
		}
		pc = c.Jump
	}
}

// CheckVars reports, as a script error, the first expression that reads a
// variable no script can define: not predefined, not set by any \set and,
// when no script has \gset or \aset, not stored by a query either.
func CheckVars(scripts []*Script, predefined []string) error {
	known := map[string]bool{}
	for _, v := range predefined {
		known[v] = true
	}
	for _, s := range scripts {
		for _, c := range s.Cmds {
			if c.Kind == SQL && (c.Gset || c.Aset) {
				return nil
			}
			if c.Kind == Set || c.Kind == SetShell {
				known[c.Var] = true
			}
		}
	}
	for _, s := range scripts {
		for _, c := range s.Cmds {
			if c.Expr == nil {
				continue
			}
			for _, v := range c.Expr.Vars() {
				if !known[v] {
					return &Error{File: s.Name, Line: c.Line, Msg: fmt.Sprintf("undefined variable :%s", v)}
				}
			}
		}
	}
	return nil
}

// MaxScripts is pgbench's MAX_SCRIPTS: the most scripts one run takes.
const MaxScripts = 128

// maxArgs is pgbench's MAX_ARGS: a command's words with its name, and a
// statement's :variables plus one under --protocol extended or prepared.
const maxArgs = 256

// MaxParams is the most :variables a statement may have under the
// extended and prepared protocols (pgbench: "statement has too many
// arguments (maximum is 255)").
const MaxParams = maxArgs - 1

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// CheckParams reports, as pgbench does when it parses a script for
// --protocol extended or prepared, a statement with more than MaxParams
// :variables. The simple protocol substitutes them and has no limit.
func (s *Script) CheckParams() error {
	for _, c := range s.Cmds {
		n := 0
		for _, p := range c.Parts {
			if p.Var != "" {
				n++
			}
		}
		if n > MaxParams {
			return &Error{File: s.Name, Line: c.Line, Msg: fmt.Sprintf("statement has too many arguments (maximum is %d)", MaxParams)}
		}
	}
	return nil
}

// sleep parses \sleep's words as pgbench 15 does: a literal integer
// (with an optional sign) whose unit may follow it at once ("2ms") or as
// a second word, or a :variable read when the command runs.
func (p *scriptParser) sleep(c *Cmd, fields []string, line int) error {
	c.Kind, c.Unit = Sleep, 1e6
	switch {
	case len(fields) < 1:
		return p.errf(line, "\\sleep: missing argument in command \"sleep\"")
	case len(fields) > 2:
		return p.errf(line, "too many arguments in command \"sleep\"")
	}
	arg := fields[0]
	unit := ""
	if len(fields) == 2 {
		unit = fields[1]
	}
	if strings.HasPrefix(arg, ":") {
		if !validVarName(arg[1:]) {
			return p.errf(line, "\\sleep: invalid variable %q", arg)
		}
		c.SleepVar = arg[1:]
		r := &varNode{name: c.SleepVar, slot: -1}
		c.Expr = &Expr{root: r, vars: []string{c.SleepVar}, refs: []*varNode{r}}
	} else {
		j := 0
		if j < len(arg) && (arg[j] == '+' || arg[j] == '-') {
			j++
		}
		k := j
		for k < len(arg) && isDigit(arg[k]) {
			k++
		}
		if k < len(arg) {
			if unit != "" || k == j {
				return p.errf(line, "invalid sleep time, must be an integer (%s) in command \"sleep\"", arg)
			}
			unit = arg[k:]
		}
	}
	switch strings.ToLower(unit) {
	case "", "s":
	case "us":
		c.Unit = 1
	case "ms":
		c.Unit = 1000
	default:
		return p.errf(line, "unrecognized time unit, must be us, ms or s (%s) in command \"sleep\"", unit)
	}
	if c.SleepVar == "" {
		digits := strings.TrimSuffix(arg, unit)
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return p.errf(line, "\\sleep: %s %s is out of range (at most %d s)", digits, unitName(c.Unit), MaxSleep/time.Second)
		}
		c.SleepN = n
		if _, err := c.SleepFor(c.SleepN); err != nil {
			return p.errf(line, "%v", err)
		}
	}
	return nil
}

// SleepDuration is how long a \sleep command waits now: its literal, or
// its variable's value read as pgbench reads it (atoi of the value's
// text: 1.5 is 1; text that is not a number is an error).
func (c *Cmd) SleepDuration(st *State) (time.Duration, error) {
	if c.SleepVar == "" {
		return c.SleepFor(c.SleepN)
	}
	r := c.Expr.refs[0]
	var v Value
	var ok bool
	if r.slot >= 0 {
		v, ok = st.GetSlot(r.slot)
	} else {
		v, ok = st.Get(c.SleepVar)
	}
	if !ok {
		return 0, fmt.Errorf("sleep: undefined variable %q", c.SleepVar)
	}
	text := v.Text()
	n := atoi(text)
	if n == 0 && (text == "" || !isDigit(text[0])) {
		return 0, fmt.Errorf("sleep: invalid sleep time %q for variable %q", text, c.SleepVar)
	}
	return c.SleepFor(n)
}

// atoi is C's atoi: leading spaces, a sign, digits; the rest ignored. It
// saturates instead of overflowing.
func atoi(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n int64
	for ; i < len(s) && isDigit(s[i]); i++ {
		if n < (1<<63-1)/10 {
			n = n*10 + int64(s[i]-'0')
		}
	}
	if neg {
		n = -n
	}
	return n
}

// ValidVarNameBytes reports whether name is a valid variable name, as
// pgbench's valid_variable_name: ASCII letters, digits (not first),
// underscores and any non-ASCII byte.
func ValidVarNameBytes(name []byte) bool {
	if len(name) == 0 || isDigit(name[0]) {
		return false
	}
	for _, c := range name {
		if !isVarChar(c) {
			return false
		}
	}
	return true
}

// IsClientCopy reports whether SQL text (one statement, or several joined
// by \;) holds a COPY to or from the client (FROM STDIN, TO STDOUT),
// which pgbench refuses ("COPY is not supported in pgbench"). Clients
// that cannot see the server's COPY response check the text instead.
func IsClientCopy(text string) bool {
	for _, stmt := range strings.Split(text, ";") {
		words := strings.FieldsFunc(strings.ToLower(stmt), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r == '_')
		})
		if len(words) == 0 || words[0] != "copy" {
			continue
		}
		for _, w := range words[1:] {
			if w == "stdin" || w == "stdout" {
				return true
			}
		}
	}
	return false
}

// exprErr words an expression's syntax error as pgbench does ("syntax
// error in command "set"...").
func exprErr(cmd string, err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "syntax error"); ok {
		return fmt.Sprintf("syntax error in command %q%s", cmd, rest)
	}
	return msg
}
