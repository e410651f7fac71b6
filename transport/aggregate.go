package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/quarrydata/quarry/aggregate"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

func aggregateRoutes() []route {
	return []route{{method: "GET", pattern: "/aggregate/{className}", fn: runAggregate}}
}

// aggregateParams are the parameters of /aggregate that are not stages.
var aggregateParams = map[string]bool{
	"distinct": true, "where": true, "pipeline": true, "explain": true,
	"hint": true, "comment": true, "readPreference": true,
}

// runAggregate answers GET /aggregate/<C> (master key): distinct=<field>
// with an optional where, or a pipeline given as pipeline=[{stage}, …]
// (or an object of stages) or as one parameter per stage (group=…,
// $sort=…). Stages run in the order sent, so the request is read in its
// raw form: decoded JSON forgets the order of keys.
func runAggregate(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	params, err := orderedParams(c)
	if err != nil {
		return nil, err
	}
	var p service.AggregateParams
	var pipeline *keyed
	for _, kv := range params {
		name, v := kv.key, kv.val
		switch name {
		case "distinct":
			str, ok := v.(string)
			if !ok || str == "" {
				return nil, schema.Errorf(schema.CodeInvalidQuery, "distinct must name a field")
			}
			p.Distinct = str
		case "where":
			switch w := v.(type) {
			case nil:
			case *ordered:
				p.Where = w.plain()
			default:
				return nil, schema.Errorf(schema.CodeInvalidJSON, "where must be a JSON object")
			}
		case "pipeline":
			pipeline = &keyed{key: name, val: v}
		case "explain":
			p.Explain = truthy(plainValue(v))
		case "hint", "comment", "readPreference":
			// Accepted for compatibility; the planner picks its own plan.
		default:
			p.Stages = append(p.Stages, stageOf(name, v))
		}
	}
	if pipeline != nil {
		if len(p.Stages) > 0 {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "give the stages either in pipeline or as parameters, not both")
		}
		stages, err := pipelineStages(pipeline.val)
		if err != nil {
			return nil, err
		}
		p.Stages = stages
	}
	res, err := s.svc.Aggregate(c.auth, c.params.get("className"), p)
	if err != nil {
		return nil, err
	}
	if res.Explain != nil {
		return map[string]any{"results": res.Explain}, nil
	}
	return aggregateBody{&res}, nil
}

// aggregateBody is an aggregate's reply, {"results": [...]}, its plain
// objects encoded from their stored bytes (service.AggregateResult).
type aggregateBody struct{ res *service.AggregateResult }

func (a aggregateBody) appendJSON(dst []byte) ([]byte, error) {
	dst, err := a.res.AppendResults(append(dst, `{"results":`...))
	return append(dst, '}'), err
}

// MarshalJSON encodes the reply inside another (a batch's results).
func (a aggregateBody) MarshalJSON() ([]byte, error) { return a.appendJSON(nil) }

func pipelineStages(v any) ([]aggregate.Stage, error) {
	switch x := v.(type) {
	case []any:
		out := make([]aggregate.Stage, 0, len(x))
		for _, e := range x {
			o, ok := e.(*ordered)
			if !ok || len(o.items) != 1 {
				found := ""
				if ok {
					keys := make([]string, len(o.items))
					for i, kv := range o.items {
						keys[i] = kv.key
					}
					found = strings.Join(keys, ", ")
				}
				return nil, schema.Errorf(schema.CodeInvalidQuery, "Pipeline stages should only have one key but found %s", found)
			}
			out = append(out, stageOf(o.items[0].key, o.items[0].val))
		}
		return out, nil
	case *ordered:
		out := make([]aggregate.Stage, 0, len(x.items))
		for _, kv := range x.items {
			out = append(out, stageOf(kv.key, kv.val))
		}
		return out, nil
	}
	return nil, schema.Errorf(schema.CodeInvalidQuery, "pipeline must be an array of stages")
}

// stageOf turns one decoded stage into the evaluator's form; a $sort
// keeps its key order.
func stageOf(name string, v any) aggregate.Stage {
	st := aggregate.Stage{Name: name, Spec: plainValue(v)}
	if o, ok := v.(*ordered); ok && strings.TrimPrefix(name, "$") == "sort" {
		for _, kv := range o.items {
			st.Keys = append(st.Keys, kv.key)
		}
	}
	return st
}

// orderedParams lists the request's parameters in the order sent: the
// body's keys (JS SDK style, credentials removed), then the URL's; a URL
// parameter replaces a body key of the same name.
func orderedParams(c *call) ([]keyed, error) {
	var out []keyed
	if len(c.raw.body) > 0 {
		v, err := decodeOrdered(c.raw.body)
		if err != nil {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON")
		}
		o, ok := v.(*ordered)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidJSON, "Invalid JSON: the body must be an object")
		}
		for _, kv := range o.items {
			if _, kept := c.body[kv.key]; kept { // credentials and _method are gone from c.body
				out = append(out, kv)
			}
		}
	} else {
		// A batch item or a call without a raw body: map order, by name.
		keys := make([]string, 0, len(c.body))
		for k := range c.body {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, keyed{k, toOrdered(c.body[k])})
		}
	}
	for _, q := range c.raw.query {
		var v any = q[1]
		if d, err := decodeOrdered([]byte(q[1])); err == nil {
			v = d
		}
		for i := range out {
			if out[i].key == q[0] {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, keyed{q[0], v})
	}
	return out, nil
}

// ordered is a JSON object that remembers the order of its keys.
type ordered struct{ items []keyed }

type keyed struct {
	key string
	val any
}

// plain converts the object (and everything inside) to decoded JSON.
func (o *ordered) plain() map[string]any {
	m := make(map[string]any, len(o.items))
	for _, kv := range o.items {
		m[kv.key] = plainValue(kv.val)
	}
	return m
}

func plainValue(v any) any {
	switch x := v.(type) {
	case *ordered:
		return x.plain()
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	}
	return v
}

// toOrdered wraps decoded JSON (keys sorted by name).
func toOrdered(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := &ordered{}
		for _, k := range keys {
			o.items = append(o.items, keyed{k, toOrdered(x[k])})
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toOrdered(e)
		}
		return out
	}
	return v
}

// decodeOrdered decodes one JSON value, objects as *ordered (a repeated
// key keeps its first place and its last value, as encoding/json keeps
// the last value).
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

// maxOrderedDepth bounds nesting (the envelope already refused deeper
// bodies; URL parameters are checked here).
const maxOrderedDepth = 64

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxOrderedDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &ordered{}
			index := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				val, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if i, dup := index[key]; dup {
					o.items[i].val = val
					continue
				}
				index[key] = len(o.items)
				o.items = append(o.items, keyed{key, val})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			out := []any{}
			for dec.More() {
				val, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return out, nil
		}
		return nil, errors.New("unexpected delimiter")
	}
	return tok, nil
}
