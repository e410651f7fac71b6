package fuzz

import (
	"math/rand"
	"os"
	"testing"

	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store/postgres"
	"github.com/quarrydata/quarry/store/postgres/pgtest"
)

// TestEngineVersusReferenceOnPostgres is TestEngineVersusReference with
// the data sets written through PostgreSQL, on a fixed number of queries:
// the service that wrote them answers, and so does a second service that
// loaded them back from the database, so every generated value must
// survive PostgreSQL's typed columns exactly. The databases are the
// test's own (pgtest); QUARRY_TEST_DATABASE_URI names another admin URI.
func TestEngineVersusReferenceOnPostgres(t *testing.T) {
	admin := pgtest.AdminURI
	if uri := os.Getenv(pgtest.EnvServer); uri != "" {
		admin = uri
	}
	for seed := int64(1); seed <= 5; seed++ {
		uri := pgtest.NewDatabaseOn(t, admin)
		a, err := postgres.Open(uri, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		c := openCaseOn(t, a, seed, map[bool]int{true: 300}[seed == 5])
		b, err := postgres.Open(uri, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		svc, err := service.Open(b, caseOptions(seed))
		if err != nil {
			t.Fatal(err)
		}
		loaded := &engineCase{svc: svc, world: c.world, indexes: c.indexes}
		g := &QueryGen{R: rand.New(rand.NewSource(seed * 7919)), World: c.world}
		for i := 0; i < 80; i++ {
			q := g.Query()
			if err := c.check(q); err != nil {
				t.Fatalf("data set %d query %d, on the writing service: %v", seed, i, err)
			}
			if err := loaded.check(q); err != nil {
				t.Fatalf("data set %d query %d, on a service loaded from PostgreSQL: %v", seed, i, err)
			}
		}
	}
}
