package dumpload

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkToLoadData converts a wide extended INSERT (an e-shop product
// table's shape: numbers, short and long strings, NULLs, escapes).
func BenchmarkToLoadData(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO `product` VALUES ")
	for r := 0; r < 100; r++ {
		if r > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('(')
		for c := 0; c < 200; c++ {
			if c > 0 {
				sb.WriteByte(',')
			}
			switch c % 5 {
			case 0:
				fmt.Fprintf(&sb, "%d", r*1000+c)
			case 1:
				fmt.Fprintf(&sb, "%d.%02d", c, r%100)
			case 2:
				sb.WriteString("'a plain value of some length, as product text goes'")
			case 3:
				sb.WriteString(`'it\'s got \"escapes\"\nand lines'`)
			case 4:
				sb.WriteString("NULL")
			}
		}
		sb.WriteByte(')')
	}
	q := sb.String()
	b.SetBytes(int64(len(q)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := toLoadData(q); !ok {
			b.Fatal("not converted")
		}
	}
}
