package main

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// gen makes a deterministic stream of values per table row: every row is
// made from its own seed, so the output does not depend on the order rows
// are written in.
type gen struct{ seed uint64 }

func (g gen) at(table string, i int64) *rnd {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", g.seed, table, i)
	return &rnd{s: h.Sum64()}
}

// rnd is splitmix64.
type rnd struct{ s uint64 }

func (r *rnd) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rnd) n(k int) int           { return int(r.next() % uint64(max(k, 1))) }
func (r *rnd) n64(k int64) int64     { return int64(r.next() % uint64(max(k, 1))) }
func (r *rnd) chance(p float64) bool { return float64(r.next()%1_000_000) < p*1_000_000 }

// nullable returns nil with probability pNull, else v.
func (r *rnd) nullable(pNull float64, v any) any {
	if r.chance(pNull) {
		return nil
	}
	return v
}

func (r *rnd) oneOf(list []string) string { return list[r.n(len(list))] }
func (r *rnd) word() string               { return r.oneOf(words) }

// decimal returns lo..hi hundredths (or other scale) as a decimal literal.
func (r *rnd) decimal(lo, hi int64, scale int) decimal {
	v := lo + r.n64(hi-lo+1)
	if scale == 0 {
		return decimal(fmt.Sprint(v))
	}
	p := int64(1)
	for range scale {
		p *= 10
	}
	return decimal(fmt.Sprintf("%d.%0*d", v/p, scale, v%p))
}

func (r *rnd) date(y0, y1 int) stamp {
	return stamp(fmt.Sprintf("%04d-%02d-%02d", y0+r.n(y1-y0+1), 1+r.n(12), 1+r.n(28)))
}

func (r *rnd) datetime(y0, y1 int) stamp {
	return stamp(fmt.Sprintf("%s %02d:%02d:%02d", r.date(y0, y1), r.n(24), r.n(60), r.n(60)))
}

// title is n capitalised words.
func (r *rnd) title(n int) string {
	parts := make([]string, n)
	for i := range parts {
		w := r.word()
		parts[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(parts, " ")
}

// text is lo..hi sentences.
func (r *rnd) text(lo, hi int) string {
	k := lo + r.n(hi-lo+1)
	var b strings.Builder
	for i := range k {
		if i > 0 {
			b.WriteByte(' ')
		}
		n := 4 + r.n(8)
		for j := range n {
			w := r.word()
			if j == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
		b.WriteByte('.')
	}
	return b.String()
}

// description is a product page text: paragraphs with the content a naive
// dump rewrite breaks (the words MyISAM and ENGINE=, quotes, backslashes,
// tabs, new lines, Cyrillic and emoji) in some products.
func (r *rnd) description(i int64) string {
	var b strings.Builder
	b.WriteString(r.text(2, 5))
	for _, extra := range tricky {
		if r.chance(0.08) {
			b.WriteString("\n\n")
			b.WriteString(extra)
		}
	}
	if i%97 == 0 {
		b.WriteString("\n\nNote for the shop owner: this catalogue used ENGINE=MyISAM; copies for InnoDB must not change this line.")
	}
	b.WriteString("\n\n")
	b.WriteString(r.text(1, 3))
	return b.String()
}

func (r *rnd) keywords() string {
	n := 3 + r.n(6)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = r.word()
	}
	return strings.Join(parts, ", ")
}

// slug is a URL-safe lower-case name.
func slug(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			return c
		case c >= 'A' && c <= 'Z':
			return c + 'a' - 'A'
		}
		return '-'
	}, s)
}

var tricky = []string{
	"Compatible with myisam and InnoDB storage: it's the \"classic\" model.",
	"Path on the driver disc: C:\\drivers\\shop\\setup.exe",
	"Size table:\tS\tM\tL\nchest\t90\t96\t102",
	"Описание товара: прочный корпус, гарантия 2 года.",
	"Customers love it 😀👍 — five stars ★★★★★",
	"Semicolon; inside; text; and a line that reads: DROP TABLE product;",
	"Percent 100% and underscore_name and 'single quotes' and `backticks`.",
}

var words = strings.Fields(`alpha amber anchor arctic aurora basic bold breeze bright canyon carbon cedar classic
cloud cobalt comfort compact copper coral crystal delta desert digital eagle echo eco elite ember falcon fiber
flex forest fusion galaxy garden glacier glow granite harbor horizon hybrid indigo iron ivory jade jet jungle
keystone lagoon laser legend lime linen lunar maple marble matrix meadow metro mint mono nova oak ocean olive
onyx orbit pacific pearl pine pixel plasma polar prime pulse quartz radiant rapid raven ridge river rocket
royal ruby sable sage sapphire shadow sierra silver solar sonic spark spruce steel stone storm summit sunset
swift tango terra thunder tidal timber titan topaz trail ultra urban valley vector velvet vertex vista volt
wave willow wind winter zen zephyr chair table lamp desk shelf sofa kettle blender drill hammer jacket boots
backpack tent lantern bottle mug plate bowl knife pan pot speaker headphones charger cable router camera lens
tripod monitor keyboard mouse printer scanner watch bracelet ring scarf glove hat umbrella towel pillow blanket`)

var countries = []string{"DE", "FR", "IT", "US", "CN", "JP", "KR", "RU", "PL", "SE", "GB", "ES"}

var cities = []string{"Berlin", "Paris", "Milan", "Boston", "Shenzhen", "Osaka", "Seoul", "Moscow", "Warsaw",
	"Malmö", "Leeds", "Valencia", "Zürich", "Kraków"}

// currencies: code, name, symbol, rate to the shop's currency.
var currencies = [][4]string{{"EUR", "Euro", "€", "1.000000"}, {"USD", "US dollar", "$", "1.081200"},
	{"GBP", "Pound sterling", "£", "0.857300"}, {"RUB", "Russian rouble", "₽", "98.450000"},
	{"PLN", "Złoty", "zł", "4.331000"}, {"JPY", "Yen", "¥", "162.140000"}}

var units = [][2]string{{"pc", "piece"}, {"kg", "kilogram"}, {"g", "gram"}, {"l", "litre"}, {"m", "metre"},
	{"pack", "pack"}, {"set", "set"}, {"pair", "pair"}}

var attributeNames = []string{"colour", "material", "country_of_origin", "warranty", "style"}
