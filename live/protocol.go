package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// The LiveQuery protocol's error codes (Parse Server's numbering) and
// whether the client should reconnect, as one table: the code that sends
// errors and the tests both read it.
const (
	CodeBadMessage    = 1 // invalid JSON or a message that fails the schema
	CodeNotConnected  = 2 // subscribe/update/unsubscribe before connect; unknown requestId
	CodeUnknownOp     = 3 // an op other than connect, subscribe, update, unsubscribe
	CodeKeyNotValid   = 4 // keyPairs configured and no key of the connect matched
	CodeSessionToken  = 209
	CodeClassDisabled = 119 // the class is not in liveQuery.classNames
	// CodeSubscriptionQuota refuses a subscribe past a quota (per
	// connection, per user, per app): Parse's REQUEST_LIMIT_EXCEEDED.
	// Reconnecting would not help, so the frame says reconnect: false.
	CodeSubscriptionQuota = 155
)

// errorReconnect says, per code, whether the error message carries
// reconnect: true. Parse Server asks clients to reconnect after protocol
// errors (1-4); errors about one subscription (a bad query, a refused
// class or session) leave the connection as it is, since a reconnect
// would re-send the same subscription.
var errorReconnect = map[int]bool{CodeBadMessage: true, CodeNotConnected: true, CodeUnknownOp: true, CodeKeyNotValid: true}

// Limits of the protocol.
const (
	// MaxMessageBytes is the largest client message handled. A larger one
	// is read to its end, dropped, and answered with an error; the
	// connection stays usable.
	MaxMessageBytes = 1 << 20
	// MaxFrameBytes is the largest message read at all; past it the
	// connection is closed with status 1009 (message too big).
	MaxFrameBytes = 16 << 20
	// MaxKeys bounds the keys and the watch list of one subscription.
	MaxKeys = 1000
)

// request is a decoded client message.
type request struct {
	op        string
	requestID json.Number // subscribe, update, unsubscribe
	// connect
	applicationID  string
	sessionToken   string
	installationID string
	keys           map[string]string // javascriptKey, masterKey, clientKey, windowsKey, restAPIKey
	// subscribe, update
	className string
	where     map[string]any
	fields    []string // keys (or the older fields)
	watch     []string
}

// protoError is an error message to send.
type protoError struct {
	code      int
	msg       string
	requestID json.Number // "" sends null
}

func (e *protoError) Error() string { return e.msg }

func badMessage(format string, args ...any) *protoError {
	return &protoError{code: CodeBadMessage, msg: fmt.Sprintf(format, args...)}
}

var connectKeys = []string{"javascriptKey", "masterKey", "clientKey", "windowsKey", "restAPIKey"}

// messageSchemas list, per op, the allowed properties and their JSON
// types; required ones are marked. This is Parse Server's request schema
// (additionalProperties false everywhere) with one addition: query.fields,
// the older name of query.keys still sent by mobile SDKs.
var messageSchemas = map[string]map[string]property{
	"connect": {
		"op": {typ: "string", required: true}, "applicationId": {typ: "string", required: true},
		"javascriptKey": {typ: "string"}, "masterKey": {typ: "string"}, "clientKey": {typ: "string"},
		"windowsKey": {typ: "string"}, "restAPIKey": {typ: "string"}, "sessionToken": {typ: "string"},
		"installationId": {typ: "string"},
	},
	"subscribe": {
		"op": {typ: "string", required: true}, "requestId": {typ: "number", required: true},
		"query": {typ: "object", required: true}, "sessionToken": {typ: "string"},
	},
	"unsubscribe": {
		"op": {typ: "string", required: true}, "requestId": {typ: "number", required: true},
	},
}

var querySchema = map[string]property{
	"className": {typ: "string", required: true}, "where": {typ: "object", required: true},
	"keys": {typ: "strings"}, "fields": {typ: "strings"}, "watch": {typ: "strings"},
}

type property struct {
	typ      string // string, number, object, strings (a non-empty array of unique strings)
	required bool
}

func init() { messageSchemas["update"] = messageSchemas["subscribe"] }

// parseRequest decodes and validates one client message. Error texts are
// those of Parse Server's validator, which SDKs may compare (the JS SDK
// stops sending installationId after "Additional properties not allowed").
func parseRequest(data []byte) (*request, *protoError) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		// Say where, in our words: the decoder's own text is not for clients.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, badMessage("Invalid JSON at byte %d", se.Offset)
		}
		return nil, badMessage("Invalid JSON")
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, badMessage("Invalid type: %s (expected object)", jsonType(raw))
	}
	opv, has := m["op"]
	if !has {
		return nil, badMessage("Missing required property: op")
	}
	op, ok := opv.(string)
	if !ok {
		return nil, badMessage("Invalid type: %s (expected string)", jsonType(opv))
	}
	schema, known := messageSchemas[op]
	if !known {
		return nil, &protoError{code: CodeUnknownOp, msg: "Get unknown operation"}
	}
	if err := validate(m, schema); err != nil {
		// An error about a subscription names it, so the SDK fails that
		// subscription instead of reconnecting to send it again.
		if id, ok := m["requestId"].(float64); ok && op != "connect" {
			err.requestID = json.Number(strconv.FormatFloat(id, 'g', -1, 64))
		}
		return nil, err
	}
	r := &request{op: op}
	if v, ok := m["requestId"]; ok {
		r.requestID = json.Number(strconv.FormatFloat(v.(float64), 'g', -1, 64))
	}
	r.sessionToken, _ = m["sessionToken"].(string)
	switch op {
	case "connect":
		r.applicationID, _ = m["applicationId"].(string)
		r.installationID, _ = m["installationId"].(string)
		r.keys = map[string]string{}
		for _, k := range connectKeys {
			if v, ok := m[k].(string); ok {
				r.keys[k] = v
			}
		}
	case "subscribe", "update":
		q := m["query"].(map[string]any)
		if err := validate(q, querySchema); err != nil {
			err.requestID = r.requestID
			return nil, err
		}
		r.className = q["className"].(string)
		r.where = q["where"].(map[string]any)
		r.fields = stringList(q["keys"])
		if r.fields == nil {
			r.fields = stringList(q["fields"])
		}
		r.watch = stringList(q["watch"])
		if len(r.fields) > MaxKeys || len(r.watch) > MaxKeys {
			return nil, &protoError{code: CodeBadMessage, msg: fmt.Sprintf("keys and watch take at most %d fields", MaxKeys), requestID: r.requestID}
		}
	}
	return r, nil
}

func validate(m map[string]any, schema map[string]property) *protoError {
	names := make([]string, 0, len(schema))
	for name := range schema {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := schema[name]
		v, has := m[name]
		if !has {
			if p.required {
				return badMessage("Missing required property: %s", name)
			}
			continue
		}
		if got := jsonType(v); !p.accepts(v) {
			want := p.typ
			if want == "strings" {
				want = "array"
				if got == "array" {
					return badMessage("Invalid %s: want at least one unique string", name)
				}
			}
			return badMessage("Invalid type: %s (expected %s)", got, want)
		}
	}
	for name := range m {
		if _, ok := schema[name]; !ok {
			return badMessage("Additional properties not allowed")
		}
	}
	return nil
}

func (p property) accepts(v any) bool {
	switch p.typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "strings":
		arr, ok := v.([]any)
		if !ok || len(arr) == 0 {
			return false
		}
		seen := map[string]bool{}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok || seen[s] {
				return false
			}
			seen[s] = true
		}
		return true
	}
	return false
}

func stringList(v any) []string {
	arr, _ := v.([]any)
	if arr == nil {
		return nil
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		out[i], _ = e.(string)
	}
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}

// Server → client messages. Events are assembled from pre-encoded parts
// (see deliver), the rest are encoded here.

func errorMessage(e *protoError) []byte {
	// An error about one request never asks for a reconnect: the client
	// would re-send the same request.
	reconnect := errorReconnect[e.code] && e.requestID == ""
	msg := map[string]any{"op": "error", "code": e.code, "error": e.msg, "reconnect": reconnect}
	if e.requestID != "" {
		msg["requestId"] = e.requestID
	} else {
		msg["requestId"] = nil
	}
	b, _ := json.Marshal(msg)
	return b
}
