package live

import (
	"bytes"
	"encoding/json"
	"testing"
)

// A change message from Redis keeps each object's JSON as received, for
// events that send the whole object; bytes that are not valid UTF-8
// (another publisher's) are encoded anew from the decoded map. The
// publishing side sends the stored bytes it has instead of encoding the
// map, and a message it sends decodes to the same objects.
func TestRedisChangeKeepsObjectBytes(t *testing.T) {
	cases := []struct {
		name         string
		payload      string
		deleted      bool
		wantObject   string // ObjectJSON; "" for nil
		wantOriginal string
	}{
		{"an update", `{"currentParseObject":{"className":"C","objectId":"a","n":2},"originalParseObject":{"className":"C","objectId":"a","n":1}}`, false,
			`{"className":"C","objectId":"a","n":2}`, `{"className":"C","objectId":"a","n":1}`},
		{"a create", `{"currentParseObject":{"className":"C","objectId":"a"}}`, false, `{"className":"C","objectId":"a"}`, ""},
		{"a delete ignores an original", `{"currentParseObject":{"className":"C","objectId":"a"},"originalParseObject":{"className":"C"}}`, true,
			`{"className":"C","objectId":"a"}`, ""},
		{"invalid UTF-8", "{\"currentParseObject\":{\"className\":\"C\",\"s\":\"\xff\"}}", false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := decodeRedis([]byte(c.payload), c.deleted)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Class != "C" || ch.Object == nil || string(ch.ObjectJSON) != c.wantObject || string(ch.OriginalJSON) != c.wantOriginal {
				t.Errorf("decoded %+v, ObjectJSON %s, OriginalJSON %s", ch, ch.ObjectJSON, ch.OriginalJSON)
			}
		})
	}
	for _, bad := range []string{`{"currentParseObject":null}`, `{"currentParseObject":"x"}`, `{}`} {
		if _, err := decodeRedis([]byte(bad), false); err == nil {
			t.Errorf("%s decoded without error", bad)
		}
	}

	stored := []byte(`{"__type":"Object","className":"C","objectId":"a","n":2}`)
	c := Change{Class: "C", Object: map[string]any{"className": "C", "objectId": "a", "n": 99.0}, ObjectJSON: stored}
	_, payload, err := encodeRedis(redisOut{change: &c})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(payload, stored) {
		t.Errorf("the message %s does not carry the stored bytes %s", payload, stored)
	}
	back, err := decodeRedis(payload, false)
	if err != nil || !bytes.Equal(back.ObjectJSON, stored) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	var want map[string]any
	json.Unmarshal(stored, &want)
	if back.Object["n"] != want["n"] {
		t.Errorf("round trip object %v, want %v", back.Object, want)
	}
}
