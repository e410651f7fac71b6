package index

import (
	"testing"
)

// benchItemJSON is a load-suite item as Marshal stores it (keys sorted).
var benchItemJSON = []byte(`{"ACL":{"*":{"read":true,"write":true}},"category":"c1234","createdAt":"2026-11-28T12:00:00.000Z",` +
	`"location":{"__type":"GeoPoint","latitude":10.123456789,"longitude":20.98765432},"n":12345,"objectId":"AbCdEfGhIj",` +
	`"owner":{"__type":"Pointer","className":"LOwner","objectId":"ZyXwVuTsRq"},"score":54321,"tag":17,"updatedAt":"2026-11-28T12:00:00.000Z"}`)

// Benchmark_Project_TwoMembers_Item reads what the issue #34 $or's
// residual reads (category and score) from an item's bytes: what a byte
// test costs a candidate, against Benchmark_Decode_Item, what testing it
// on a decoded map cost when no map was cached.
func Benchmark_Project_TwoMembers_Item(b *testing.B) {
	obj, err := Decode(benchItemJSON)
	if err != nil {
		b.Fatal(err)
	}
	ref := Ref{newRecord(obj, benchItemJSON, false)}
	keys := []string{"category", "score"}
	dst := map[string]any{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ref.Project(keys, dst)
	}
	if dst["category"] != "c1234" || dst["score"] != 54321.0 {
		b.Fatalf("projected %v", dst)
	}
}

func Benchmark_Decode_Item(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(benchItemJSON); err != nil {
			b.Fatal(err)
		}
	}
}
