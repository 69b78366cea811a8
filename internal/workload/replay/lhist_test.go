package replay

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestLhist(t *testing.T) {
	var h, a, b lhist
	var all []int64
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 10000 {
		us := int64(r.ExpFloat64() * 5000)
		all = append(all, us)
		h.record(time.Duration(us) * time.Microsecond)
		if i%2 == 0 {
			a.record(time.Duration(us) * time.Microsecond)
		} else {
			b.record(time.Duration(us) * time.Microsecond)
		}
	}
	a.merge(&b)
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for _, q := range []float64{50, 95, 99} {
		exact := all[int(q/100*float64(len(all)))-1]
		for _, x := range []*lhist{&h, &a} {
			got := x.quantile(q)
			if d := float64(got-exact) / float64(exact); d > 0.04 || d < -0.04 {
				t.Errorf("p%v = %d, exact %d", q, got, exact)
			}
		}
	}
	if h.max != all[len(all)-1] || a.max != h.max || a.n != h.n || a.sum != h.sum {
		t.Errorf("max %d/%d n %d/%d", h.max, a.max, h.n, a.n)
	}
	for i := 0; i < 5000; i++ {
		if v := valueOf(bucketOf(int64(i))); bucketOf(v) != bucketOf(int64(i)) {
			t.Fatalf("bucket of %d: %d holds %d", i, bucketOf(int64(i)), v)
		}
	}
}
