package transport

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeOrdered: the order-keeping decoder accepts exactly what
// encoding/json accepts (one value, nesting within bounds) and, once its
// objects are flattened, yields the same value.
func FuzzDecodeOrdered(f *testing.F) {
	for _, seed := range []string{
		`{"pipeline":[{"$sort":{"b":1,"a":-1}}]}`, `[1,"x",null,true,{"k":{"n":[]}}]`, `{"a":1,"a":2}`,
		`{}`, `"s"`, `1e400`, `{"a":1} x`, `{"a":}`, `[`, `{"\u00e9":"\ud83d\ude00"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeOrdered(data)
		var want any
		wantErr := json.Unmarshal(data, &want)
		if jsonDepth(data) > maxOrderedDepth {
			return // refused by depth; encoding/json has no such bound
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: ordered err %v, encoding/json err %v", data, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(plainValue(got), want) {
			t.Fatalf("%q: ordered %#v, encoding/json %#v", data, plainValue(got), want)
		}
	})
}

// TestDecodeOrderedKeepsOrder: keys come out in the order sent.
func TestDecodeOrderedKeepsOrder(t *testing.T) {
	v, err := decodeOrdered([]byte(`{"z":1,"a":{"y":2,"b":3},"m":[{"q":1,"c":2}],"z":4}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*ordered)
	var keys []string
	for _, kv := range o.items {
		keys = append(keys, kv.key)
	}
	if !reflect.DeepEqual(keys, []string{"z", "a", "m"}) || o.items[0].val != 4.0 {
		t.Fatalf("top level: %v %v", keys, o.items[0].val)
	}
	inner := o.items[1].val.(*ordered)
	if inner.items[0].key != "y" || inner.items[1].key != "b" {
		t.Fatalf("nested: %+v", inner.items)
	}
	st := stageOf("$sort", o.items[2].val.([]any)[0])
	if !reflect.DeepEqual(st.Keys, []string{"q", "c"}) {
		t.Fatalf("sort keys %v", st.Keys)
	}
}
