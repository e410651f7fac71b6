package transport

import (
	"fmt"
	"strconv"
	"time"

	"github.com/quarrydata/quarry/logring"
	"github.com/quarrydata/quarry/schema"
)

// scriptLogDefaultN is how many entries /scriptlog returns when it is not
// told (Parse's default).
const scriptLogDefaultN = 10

func scriptLogRoutes() []route {
	return []route{{method: "GET", pattern: "/scriptlog", fn: scriptLog}}
}

// scriptLog serves the recent log entries Parse Dashboard's Logs page
// shows: level (info, error), n or size, from, until, order (desc, asc).
func scriptLog(s *Server, c *call) (any, error) {
	if err := requireMaster(c); err != nil {
		return nil, err
	}
	if s.opts.ScriptLog == nil {
		// Parse answers a server without a queryable logger with 115.
		return nil, schema.Errorf(115, "Logger adapter is not available")
	}
	params := c.allParams()
	q := logring.Query{MinLevel: logring.ParseLevel(paramString(params["level"])), N: scriptLogDefaultN,
		Ascending: paramString(params["order"]) == "asc"}
	for _, name := range []string{"n", "size"} {
		if v, ok := params[name]; ok {
			n, err := strconv.Atoi(paramString(v))
			if err != nil || n < 0 {
				return nil, schema.Errorf(schema.CodeInvalidQuery, "%s must be a whole number, got %v", name, v)
			}
			q.N = n
		}
	}
	for name, at := range map[string]*time.Time{"from": &q.From, "until": &q.Until} {
		if v := paramString(params[name]); v != "" {
			t, err := parseLogTime(v)
			if err != nil {
				return nil, schema.Errorf(schema.CodeInvalidQuery, "%s must be a date, got %q", name, v)
			}
			*at = t
		}
	}
	return s.opts.ScriptLog.Find(q), nil
}

// parseLogTime reads a date as the Dashboard and scripts send it.
func parseLogTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, strconv.ErrSyntax
}

// paramString is a URL or body parameter as text (numbers arrive decoded).
func paramString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
