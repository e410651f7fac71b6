package transport

import (
	"encoding/json"
	"strconv"
)

// appender is a reply body that encodes itself by appending its JSON to a
// buffer, as encoding/json would write it: writeJSON sends it with no
// reflection, and the objects it holds cost a copy of their ready bytes
// (service.FindResult.AppendResults).
type appender interface {
	appendJSON(dst []byte) ([]byte, error)
}

// findBody is a find's reply, c.found: {"className", "count",
// "results"}, in encoding/json's key order. It is one pointer, so it
// goes into an interface without an allocation.
type findBody struct{ c *call }

func (f findBody) appendJSON(dst []byte) ([]byte, error) {
	res := &f.c.found
	dst = append(dst, '{')
	if res.ClassName != "" {
		name, err := json.Marshal(res.ClassName)
		if err != nil {
			return dst, err
		}
		dst = append(append(append(dst, `"className":`...), name...), ',')
	}
	if res.Counted {
		dst = append(strconv.AppendInt(append(dst, `"count":`...), int64(res.Count), 10), ',')
	}
	dst, err := res.AppendResults(append(dst, `"results":`...))
	return append(dst, '}'), err
}

// MarshalJSON encodes the reply inside another (a batch's results).
func (f findBody) MarshalJSON() ([]byte, error) { return f.appendJSON(nil) }

// objectBody is a get's reply, the one object of c.found.
type objectBody struct{ c *call }

func (o objectBody) appendJSON(dst []byte) ([]byte, error) { return o.c.found.AppendResult(dst, 0) }

// MarshalJSON encodes the reply inside another (a batch's results).
func (o objectBody) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }
