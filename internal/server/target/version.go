package target

import (
	"strconv"
	"strings"
)

// versionParts splits "8.0.36-28" into [8 0 36 28]; non-numbers count as 0.
func versionParts(v string) []int {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '-' })
	parts := make([]int, 0, len(fields))
	for _, f := range fields {
		n, _ := strconv.Atoi(f)
		parts = append(parts, n)
	}
	return parts
}

// CompareVersions returns -1, 0 or 1 as a is older, equal or newer than b.
func CompareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}
