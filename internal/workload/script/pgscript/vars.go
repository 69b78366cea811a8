package pgscript

// Table gives each variable name of a set of scripts a slot, so that a
// run reads and writes variables by index instead of by name. Bind fills
// it once, before the run; it is then read-only and shared by every
// client's State.
type Table struct {
	slots map[string]int
	names []string
}

// NewTable returns a table with the given names (predefined variables)
// in slots 0, 1...
func NewTable(names ...string) *Table {
	t := &Table{slots: map[string]int{}}
	for _, n := range names {
		t.Slot(n)
	}
	return t
}

// Slot returns name's slot, adding one for a new name.
func (t *Table) Slot(name string) int {
	if i, ok := t.slots[name]; ok {
		return i
	}
	t.slots[name] = len(t.names)
	t.names = append(t.names, name)
	return len(t.names) - 1
}

// Lookup returns name's slot, if it has one.
func (t *Table) Lookup(name string) (int, bool) {
	i, ok := t.slots[name]
	return i, ok
}

// lookupBytes is Lookup of a name being built (no allocation).
func (t *Table) lookupBytes(name []byte) (int, bool) {
	i, ok := t.slots[string(name)]
	return i, ok
}

// Len is the number of slots.
func (t *Table) Len() int { return len(t.names) }

// Bind gives every variable s reads or writes (expressions, \set, SQL
// :variables) a slot of t, and resolves its references to them.
func (t *Table) Bind(s *Script) {
	for i := range s.Cmds {
		c := &s.Cmds[i]
		if c.Expr != nil {
			c.Expr.bind(t)
		}
		if c.Kind == Set {
			c.Slot = t.Slot(c.Var)
		}
		for j := range c.Parts {
			if p := &c.Parts[j]; p.Var != "" {
				p.Slot = t.Slot(p.Var)
			}
		}
	}
}

// bind resolves e's variable references to slots of t.
func (e *Expr) bind(t *Table) {
	for _, r := range e.refs {
		r.slot = t.Slot(r.name)
	}
}

// unset marks a slot no value was stored in.
const unset Kind = 255

// NewState returns a client's state with every variable of t undefined.
// Expressions and commands bound to t (Bind) must be evaluated with a
// State of t; a nil t gives the state a table of its own.
func NewState(t *Table, r *PRNG, defaultSeed int64) *State {
	s := &State{Rand: r, DefaultSeed: defaultSeed, table: t}
	if t == nil {
		s.table, s.own = NewTable(), true
	}
	s.vals = make([]Value, s.table.Len())
	for i := range s.vals {
		s.vals[i].K = unset
	}
	// hash() and permute() without a seed read :default_seed.
	s.Set("default_seed", IntV(defaultSeed))
	return s
}

// Get returns the value of the variable name, if it is defined.
func (s *State) Get(name string) (Value, bool) {
	if i, ok := s.table.Lookup(name); ok {
		return s.GetSlot(i)
	}
	v, ok := s.extra[name]
	return v, ok
}

// Set stores v in the variable name.
func (s *State) Set(name string, v Value) {
	if i, ok := s.table.Lookup(name); ok {
		s.SetSlot(i, v)
		return
	}
	if s.own {
		s.SetSlot(s.table.Slot(name), v)
		return
	}
	if s.extra == nil {
		s.extra = map[string]Value{}
	}
	s.extra[name] = v
}

// SetBytes is Set of a name being built, without allocating when the
// name has a slot.
func (s *State) SetBytes(name []byte, v Value) {
	if i, ok := s.table.lookupBytes(name); ok {
		s.SetSlot(i, v)
		return
	}
	s.Set(string(name), v)
}

// GetSlot returns the value in slot i, if one was stored.
func (s *State) GetSlot(i int) (Value, bool) {
	if i >= len(s.vals) || s.vals[i].K == unset {
		return Value{}, false
	}
	return s.vals[i], true
}

// SetSlot stores v in slot i.
func (s *State) SetSlot(i int, v Value) {
	for i >= len(s.vals) {
		s.vals = append(s.vals, Value{K: unset})
	}
	s.vals[i] = v
}
