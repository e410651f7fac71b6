package fuzz

import (
	"math/rand"
	"testing"
)

func TestDebugStats(t *testing.T) {
	dir := t.TempDir()
	nonEmpty, total, amb := 0, 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		c := openCase(t, dir, seed)
		g := &QueryGen{R: rand.New(rand.NewSource(seed * 7919)), World: c.world}
		for i := 0; i < 100; i++ {
			q := g.Query()
			a := c.world.Find(q)
			total++
			if a.Ambiguous {
				amb++
			}
			if len(a.IDs) > 0 && len(a.IDs) < len(c.world.Objects[ItemClass]) {
				nonEmpty++
			}
		}
	}
	t.Logf("total %d nontrivial %d ambiguous %d", total, nonEmpty, amb)
}
