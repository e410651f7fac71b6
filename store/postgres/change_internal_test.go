package postgres

import (
	"bytes"
	"testing"

	"github.com/quarrydata/quarry/store"
)

// TestChangeFormat pins the _changes record format: a record without a
// previous version is written exactly as before "previous" existed (no
// byte more), a carried one adds the object's JSON as it is (or null for
// "none"), and each reads back as it was written.
func TestChangeFormat(t *testing.T) {
	prev := []byte(`{"objectId":"k","n":1}`)
	cases := []struct {
		name   string
		record store.Record
		json   string
	}{
		{"not carried", store.Record{Kind: store.KindObject, Class: "C", Key: "k", Value: []byte(`{}`)},
			`[{"kind":"o","class":"C","key":"k","value":"e30="}]`},
		{"deletion, not carried", store.Record{Kind: store.KindObject, Class: "C", Key: "k"},
			`[{"kind":"o","class":"C","key":"k","value":null}]`},
		{"created", store.Record{Kind: store.KindObject, Class: "C", Key: "k", Value: []byte(`{}`), Previous: []byte{}},
			`[{"kind":"o","class":"C","key":"k","value":"e30=","previous":null}]`},
		{"updated", store.Record{Kind: store.KindObject, Class: "C", Key: "k", Value: []byte(`{}`), Previous: prev},
			`[{"kind":"o","class":"C","key":"k","value":"e30=","previous":{"objectId":"k","n":1}}]`},
		{"deleted", store.Record{Kind: store.KindObject, Class: "C", Key: "k", Previous: prev},
			`[{"kind":"o","class":"C","key":"k","value":null,"previous":{"objectId":"k","n":1}}]`},
	}
	for _, c := range cases {
		b, err := encodeChange([]store.Record{c.record})
		if err != nil || string(b) != c.json {
			t.Errorf("%s: encoded %s, %v; want %s", c.name, b, err, c.json)
			continue
		}
		back, err := decodeChange(b)
		if err != nil || len(back) != 1 {
			t.Fatalf("%s: decoded %v, %v", c.name, back, err)
		}
		r := back[0]
		if (r.Previous == nil) != (c.record.Previous == nil) || !bytes.Equal(r.Previous, c.record.Previous) ||
			(r.Value == nil) != (c.record.Value == nil) || !bytes.Equal(r.Value, c.record.Value) {
			t.Errorf("%s: read back as %+v, want %+v", c.name, r, c.record)
		}
	}
}
