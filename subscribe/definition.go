// Package subscribe runs server-side subscriptions: an operator (master
// key) names a class, a where, keys and events, and every matching change
// is delivered to a webhook (HMAC-signed, retried with backoff) or to a
// Redis stream (XADD with MAXLEN). Definitions live in the master-only
// class _Subscription. Each subscription reads the store's change log
// (store.ChangeLog) from its saved position on a goroutine of its own, so
// it resumes after a crash and a slow target delays only itself; on a
// shared store one instance at a time owns it (store.Leaser). Service
// never imports it.
package subscribe

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"

	"github.com/quarrydata/quarry/live/match"
	"github.com/quarrydata/quarry/schema"
)

// ClassName is the master-only class the definitions are kept in.
const ClassName = "_Subscription"

// Limits and Parse error codes.
const (
	// MaxNameLength bounds a subscription's name.
	MaxNameLength = 128
	// CodeInvalid is a malformed or unknown subscription (Parse's 143,
	// the code of a refused /hooks request).
	CodeInvalid = 143
	// CodeQuotaExceeded is the refusal of a subscription beyond
	// maxServerSubscriptions (Parse's 155, request limit exceeded).
	CodeQuotaExceeded = 155
	// CodeDisabled answers every request while maxServerSubscriptions
	// is 0 (Parse's 119, operation forbidden).
	CodeDisabled = 119
)

// The target types.
const (
	TargetWebhook = "webhook"
	TargetRedis   = "redis"
)

var nameRule = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Target is where a subscription's events go.
type Target struct {
	Type string `json:"type"`
	// URL is the webhook's http(s) URL, or the Redis server's redis:// URL.
	URL string `json:"url"`
	// Secret signs a webhook's bodies (HMAC-SHA256); never shown back.
	Secret string `json:"secret,omitempty"`
	// Stream and MaxLen are the Redis stream and its approximate length
	// cap (XADD MAXLEN ~); MaxLen 0 keeps every entry.
	Stream string `json:"stream,omitempty"`
	MaxLen int64  `json:"maxLen,omitempty"`
}

// Definition is one server-side subscription as /hooks/subscriptions
// shows it.
type Definition struct {
	Name      string         `json:"name"`
	ClassName string         `json:"className"`
	Where     map[string]any `json:"where"`
	Keys      []string       `json:"keys,omitempty"`
	Events    []string       `json:"events"`
	Target    Target         `json:"target"`
	// Delivery is how this instance stands with it (answers only).
	Delivery *Delivery `json:"delivery,omitempty"`
}

// Delivery is a subscription's state on the instance that answers.
type Delivery struct {
	// Position is the last change of the log it handled (on the owner;
	// elsewhere, where it stood when this instance last owned it).
	Position int64 `json:"position"`
	// Delivering says this instance owns it now: on a shared store one
	// instance at a time does.
	Delivering bool `json:"delivering"`
}

// allEvents are the events a subscription gets when it names none.
var allEvents = []string{"create", "update", "delete", "enter", "leave"}

func invalid(format string, args ...any) error {
	return schema.Errorf(CodeInvalid, "invalid subscription: "+format, args...)
}

// decodeDefinition reads a definition from a request body or a stored
// object.
func decodeDefinition(body map[string]any) (Definition, error) {
	var d Definition
	var ok bool
	if d.Name, ok = body["name"].(string); !ok || d.Name == "" || len(d.Name) > MaxNameLength || !nameRule.MatchString(d.Name) {
		return d, invalid("name must be 1 to %d letters, digits, '_', '.' or '-'", MaxNameLength)
	}
	if d.ClassName, ok = body["className"].(string); !ok || !schema.ValidClassName(d.ClassName) || d.ClassName == ClassName {
		return d, invalid("className must name a class")
	}
	w := body["where"]
	if text, isText := w.(string); isText { // as stored
		if err := json.Unmarshal([]byte(text), &w); err != nil {
			return d, invalid("where must be an object")
		}
	}
	if w != nil {
		if d.Where, ok = w.(map[string]any); !ok {
			return d, invalid("where must be an object")
		}
	}
	if d.Where == nil {
		d.Where = map[string]any{}
	}
	var err error
	if d.Keys, err = stringList(body["keys"], "keys"); err != nil {
		return d, err
	}
	if d.Events, err = stringList(body["events"], "events"); err != nil {
		return d, err
	}
	if len(d.Events) == 0 {
		d.Events = slices.Clone(allEvents)
	}
	for _, e := range d.Events {
		if !slices.Contains(allEvents, e) {
			return d, invalid("unknown event %q (create, update, delete, enter, leave)", e)
		}
	}
	t, _ := body["target"].(map[string]any)
	if t == nil {
		return d, invalid("target must be an object")
	}
	d.Target.Type, _ = t["type"].(string)
	d.Target.URL, _ = t["url"].(string)
	d.Target.Secret, _ = t["secret"].(string)
	d.Target.Stream, _ = t["stream"].(string)
	if n, present := t["maxLen"]; present {
		f, isNum := n.(float64)
		if !isNum || f < 0 || f != float64(int64(f)) {
			return d, invalid("target.maxLen must be a whole number")
		}
		d.Target.MaxLen = int64(f)
	}
	return d, d.Target.check()
}

func (t Target) check() error {
	u, err := url.Parse(t.URL)
	switch t.Type {
	case TargetWebhook:
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid("a webhook target needs an http(s) url")
		}
		if t.Secret == "" {
			return invalid("a webhook target needs a secret to sign its bodies")
		}
	case TargetRedis:
		if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
			return invalid("a redis target needs a redis:// url")
		}
		if t.Stream == "" {
			return invalid("a redis target needs a stream")
		}
	default:
		return invalid("target.type must be %q or %q", TargetWebhook, TargetRedis)
	}
	return nil
}

func stringList(v any, name string) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, invalid("%s must be an array of strings", name)
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, invalid("%s must be an array of strings", name)
		}
		out = append(out, s)
	}
	return out, nil
}

// compile is the definition's matcher. Live joins need LiveQuery's join
// state, which server-side subscriptions do not keep yet: refused.
func (d Definition) compile() (*match.Query, error) {
	q, err := match.Compile(d.ClassName, d.Where, match.Options{})
	if err != nil {
		return nil, err
	}
	if len(q.Joins()) > 0 {
		return nil, schema.Errorf(schema.CodeInvalidQuery, "live joins ($inQuery, $select, ...) are not supported in server-side subscriptions yet")
	}
	return q, nil
}

// stored is the definition as the fields of its _Subscription object.
func (d Definition) stored() map[string]any {
	keys := make([]any, len(d.Keys))
	for i, k := range d.Keys {
		keys[i] = k
	}
	events := make([]any, len(d.Events))
	for i, e := range d.Events {
		events[i] = e
	}
	target := map[string]any{"type": d.Target.Type, "url": d.Target.URL}
	if d.Target.Secret != "" {
		target["secret"] = d.Target.Secret
	}
	if d.Target.Stream != "" {
		target["stream"] = d.Target.Stream
		target["maxLen"] = float64(d.Target.MaxLen)
	}
	where, _ := json.Marshal(d.Where) // it was decoded from JSON
	return map[string]any{"name": d.Name, "className": d.ClassName, "where": string(where), "keys": keys, "events": events,
		"target": target, "ACL": map[string]any{}}
}

// Shown is the definition as the API answers it: the secret is never
// sent back.
func (d Definition) Shown() Definition {
	d.Target.Secret = ""
	return d
}

func (d Definition) wants(ev match.Event) bool {
	return slices.Contains(d.Events, ev.String())
}

func (d Definition) String() string {
	return fmt.Sprintf("%s (%s → %s)", d.Name, d.ClassName, d.Target.Type)
}
