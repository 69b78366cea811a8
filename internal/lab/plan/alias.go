package plan

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// MaxValues bounds the values a plan holds once its aliases are expanded,
// so that an alias bomb (each anchor repeating the one before it many times)
// is refused before it is walked.
const MaxValues = 100_000

// resolveAliases replaces every alias in root's tree by the node its anchor
// names (shared, not copied: the plan only reads the tree). It fails on an
// alias inside its own anchor, and when the expanded tree would hold more
// than MaxValues nodes; the cost is one visit of each node of the file.
func resolveAliases(root *yaml.Node) (bad *yaml.Node, err error) {
	const visiting = -1
	size := map[*yaml.Node]int{}
	var count func(n *yaml.Node) (int, error)
	count = func(n *yaml.Node) (int, error) {
		alias := n
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil {
				return 0, fmt.Errorf("unknown anchor %q", n.Value)
			}
			n = n.Alias
		}
		switch s, ok := size[n]; {
		case ok && s == visiting:
			bad = alias
			return 0, fmt.Errorf("alias *%s is inside its own anchor &%s", alias.Value, alias.Value)
		case ok:
			return s, nil
		}
		size[n] = visiting
		total := 1
		for _, c := range n.Content {
			s, err := count(c)
			if err != nil {
				if bad == nil {
					bad = c
				}
				return 0, err
			}
			total += s
			if total > MaxValues {
				if bad == nil && c.Kind == yaml.AliasNode {
					bad = c
				}
				return 0, fmt.Errorf("aliases expand the plan to more than %d values", MaxValues)
			}
		}
		size[n] = total
		return total, nil
	}
	if _, err := count(root); err != nil {
		if bad == nil {
			bad = root
		}
		return bad, err
	}
	done := map[*yaml.Node]bool{}
	var replace func(n *yaml.Node)
	replace = func(n *yaml.Node) {
		if done[n] {
			return
		}
		done[n] = true
		for i, c := range n.Content {
			if c.Kind == yaml.AliasNode {
				n.Content[i] = c.Alias
			}
			replace(n.Content[i])
		}
	}
	replace(root)
	return nil, nil
}
