package index

import (
	"reflect"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

func TestFlaggedCountsExactly(t *testing.T) {
	db := NewFlagging(func(o schema.Object) bool { return o["secret"] == true })
	c := db.Collection("C", true)
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"put plain", func() { c.Put(schema.Object{"objectId": "a"}) }, 0},
		{"put flagged", func() { c.Put(schema.Object{"objectId": "b", "secret": true}) }, 1},
		{"replace plain with flagged", func() { c.Put(schema.Object{"objectId": "a", "secret": true}) }, 2},
		{"replace flagged with flagged", func() { c.Put(schema.Object{"objectId": "a", "secret": true, "n": 1.0}) }, 2},
		{"replace flagged with plain", func() { c.Put(schema.Object{"objectId": "b"}) }, 1},
		{"delete flagged", func() { c.Delete("a") }, 0},
		{"delete missing", func() { c.Delete("zz") }, 0},
	}
	for _, s := range steps {
		s.do()
		if got := c.Flagged(); got != s.want {
			t.Fatalf("%s: Flagged() = %d, want %d", s.name, got, s.want)
		}
	}
	if New().Collection("C", true).Flagged() != 0 {
		t.Fatal("a DB without a predicate flags nothing")
	}
}

// TestPutLoadedFlagsFromTheBytes: a loaded object's flag, read from its
// bytes through the predicate's fields, is the flag of the decoded object,
// and the object reads back as stored.
func TestPutLoadedFlagsFromTheBytes(t *testing.T) {
	secret := func(o schema.Object) bool {
		acl, _ := o["ACL"].(map[string]any)
		pub, _ := acl["*"].(map[string]any)
		return acl != nil && pub["read"] != true
	}
	cases := []struct {
		name string
		js   string
		err  bool
	}{
		{"no ACL", `{"objectId":"a","n":1}`, false},
		{"public ACL", `{"ACL":{"*":{"read":true}},"objectId":"b"}`, false},
		{"private ACL", `{"ACL":{"u1":{"read":true,"write":true}},"objectId":"c"}`, false},
		{"escaped key in the ACL", `{"ACL":{"r\u006fle:x":{"read":true}},"objectId":"d"}`, false},
		{"ACL null", `{"ACL":null,"objectId":"e"}`, false},
		{"nested ACL is not the ACL", `{"objectId":"f","x":{"ACL":{"u":{"read":true}}}}`, false},
		{"not JSON", `{"objectId":"g",`, true},
		{"not an object", `["objectId","h"]`, true},
	}
	for _, reads := range [][]string{{"ACL"}, nil} {
		db := NewFlagging(secret, reads...)
		c := db.Collection("C", true)
		want := 0
		for _, tc := range cases {
			err := c.PutLoaded([]byte(tc.js))
			if tc.err {
				if err == nil {
					t.Errorf("reads %v, %s: no error", reads, tc.name)
				}
				continue
			}
			if err != nil {
				t.Fatalf("reads %v, %s: %v", reads, tc.name, err)
			}
			obj, err := Decode([]byte(tc.js))
			if err != nil {
				t.Fatal(err)
			}
			if secret(obj) {
				want++
			}
			if got := c.Flagged(); got != want {
				t.Errorf("reads %v, %s: Flagged() = %d, want %d", reads, tc.name, got, want)
			}
			id := obj["objectId"].(string)
			got, ok := c.Get(id)
			if !ok || !reflect.DeepEqual(got, obj) {
				t.Errorf("reads %v, %s: Get = %v, %v; want %v", reads, tc.name, got, ok, obj)
			}
		}
		if want != 2 {
			t.Fatalf("the cases flag %d objects, want 2 (c and d)", want)
		}
	}
}
