package cloud

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// TestHookDecodeReply: a webhook's answer becomes a result or a Parse
// error (141 unless the webhook names a code).
func TestHookDecodeReply(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   any // the result when code is 0
		code   int
		says   string
	}{
		{name: "success", status: 200, body: `{"success":{"n":1}}`, want: map[string]any{"n": float64(1)}},
		{name: "no success", status: 200, body: `{}`, want: service.NoResult},
		{name: "null success", status: 200, body: `{"success":null}`, want: nil},
		{name: "error string", status: 200, body: `{"error":"nope"}`, code: 141, says: "nope"},
		{name: "error with code", status: 400, body: `{"error":{"code":137,"error":"taken"}}`, code: 137, says: "taken"},
		{name: "error object without code", status: 200, body: `{"error":{"error":"bad"}}`, code: 141, says: "bad"},
		{name: "not JSON", status: 200, body: `<html>`, code: 141, says: "Malformed response"},
		{name: "server error", status: 500, body: `oops`, code: 141, says: "HTTP 500"},
		{name: "error status with success", status: 503, body: `{"success":1}`, code: 141, says: "HTTP 503"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeWebhookReply(c.status, []byte(c.body))
			if c.code == 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if c.want == nil && got != nil || c.want != nil && !reflect.DeepEqual(got, c.want) {
					t.Fatalf("result %#v, want %#v", got, c.want)
				}
				return
			}
			pe, ok := schema.AsError(err)
			if !ok || pe.Code != c.code || !strings.Contains(pe.Message, c.says) {
				t.Fatalf("error %v, want code %d saying %q", err, c.code, c.says)
			}
		})
	}
}

// TestHookMergeBeforeSave: a beforeSave webhook sets fields, never the
// ones the server owns, and keeps the fields it leaves out.
func TestHookMergeBeforeSave(t *testing.T) {
	req := &TriggerRequest{Object: schema.Object{"objectId": "a", "name": "x", "n": 1.0}}
	mergeWebhookObject(req, map[string]any{"objectId": "b", "className": "C", "createdAt": "t", "name": "y"})
	want := schema.Object{"objectId": "a", "name": "y", "n": 1.0}
	if !reflect.DeepEqual(req.Object, want) {
		t.Errorf("object %v, want %v", req.Object, want)
	}
	mergeWebhookObject(req, true) // not an object: nothing changes
	if !reflect.DeepEqual(req.Object, want) {
		t.Errorf("object %v after a non-object answer", req.Object)
	}
}
