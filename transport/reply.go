package transport

import (
	"encoding/json"
	"strconv"

	"github.com/quarrydata/quarry/service"
)

// appender is a reply body that encodes itself by appending its JSON to a
// buffer, as encoding/json would write it: writeJSON sends it with no
// reflection, and the objects it holds cost a copy of their ready bytes
// (service.FindResult.AppendResults).
type appender interface {
	appendJSON(dst []byte) ([]byte, error)
}

// findBody is a find's reply: {"className", "count", "results"}, in
// encoding/json's key order.
type findBody struct{ res service.FindResult }

func (f *findBody) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	if f.res.ClassName != "" {
		name, err := json.Marshal(f.res.ClassName)
		if err != nil {
			return dst, err
		}
		dst = append(append(append(dst, `"className":`...), name...), ',')
	}
	if f.res.Counted {
		dst = append(strconv.AppendInt(append(dst, `"count":`...), int64(f.res.Count), 10), ',')
	}
	dst, err := f.res.AppendResults(append(dst, `"results":`...))
	return append(dst, '}'), err
}

// MarshalJSON encodes the reply inside another (a batch's results).
func (f *findBody) MarshalJSON() ([]byte, error) { return f.appendJSON(nil) }

// objectBody is a get's reply: the one object.
type objectBody struct{ res service.FindResult }

func (o *objectBody) appendJSON(dst []byte) ([]byte, error) { return o.res.AppendResult(dst, 0) }

// MarshalJSON encodes the reply inside another (a batch's results).
func (o *objectBody) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }
