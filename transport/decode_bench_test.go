package transport

import (
	"encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
)

// Request decoding, encoding/json against github.com/goccy/go-json (the
// fast decoder already in the module graph), for the request shapes the
// envelope decodes: a create's body, a where parameter, and a batch of 20
// creates. Both decode into `any`, as decodeBody does.
var decodeShapes = []struct {
	name string
	body []byte
}{
	{"CreateBody", []byte(`{"name":"item number 12345","n":12345,"score":345,"category":"c45","tag":"t23",` +
		`"owner":{"__type":"Pointer","className":"Owner","objectId":"AbCdEf1234"},` +
		`"when":{"__type":"Date","iso":"2026-01-01T00:00:00.000Z"},"tags":["a","b","c"],` +
		`"ACL":{"*":{"read":true},"AbCdEf1234":{"read":true,"write":true}}}`)},
	{"Where", []byte(`{"category":"c7","score":{"$gte":100,"$lt":200},"tag":{"$in":["t1","t2","t3"]}}`)},
	{"Batch20", batch20()},
}

func batch20() []byte {
	reqs := make([]any, 20)
	for i := range reqs {
		reqs[i] = map[string]any{"method": "POST", "path": "/parse/classes/Item",
			"body": map[string]any{"name": "item", "n": float64(i), "category": "c1", "ACL": map[string]any{"*": map[string]any{"read": true}}}}
	}
	b, _ := json.Marshal(map[string]any{"requests": reqs})
	return b
}

func Benchmark_Decode_EncodingJSON(b *testing.B) { benchDecode(b, json.Unmarshal) }

func Benchmark_Decode_GoccyGoJSON(b *testing.B) { benchDecode(b, gojson.Unmarshal) }

// benchDecode decodes each shape's body into an any with unmarshal.
func benchDecode(b *testing.B, unmarshal func([]byte, any) error) {
	for _, s := range decodeShapes {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s.body)))
			for range b.N {
				var v any
				if err := unmarshal(s.body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
