package where

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// unitSeconds are the $relativeTime units Parse Server knows. A year is
// always 365 days and there are no months, as in Parse.
var unitSeconds = map[string]float64{
	"yr": 31536000, "yrs": 31536000, "year": 31536000, "years": 31536000,
	"wk": 604800, "wks": 604800, "week": 604800, "weeks": 604800,
	"d": 86400, "day": 86400, "days": 86400,
	"hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
	"min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"sec": 1, "secs": 1, "second": 1, "seconds": 1,
}

// relativeTime evaluates {$relativeTime: text} for operator op against the
// parser's clock, once, at parse time: "in 2 days", "3 hours ago", "now",
// or several number-unit pairs ("in 1 day 2 hours"). Failures are 107 with
// Parse Server's reasons.
func (p *parser) relativeTime(op string, v any) (string, any, error) {
	fail := func(reason string) error {
		return schema.Errorf(schema.CodeInvalidJSON, "bad $relativeTime (%s) value. %s", op, reason)
	}
	text, ok := v.(string)
	if !ok {
		return "", nil, fail("$relativeTime should be a string")
	}
	lower := strings.ToLower(text)
	var parts []string
	// Parse Server splits on single spaces only; tabs are not separators.
	for _, f := range strings.Split(lower, " ") {
		if f != "" {
			parts = append(parts, f)
		}
	}
	future := len(parts) > 0 && parts[0] == "in"
	past := len(parts) > 0 && parts[len(parts)-1] == "ago"
	if !future && !past && lower != "now" {
		return "", nil, fail("Time should either start with 'in' or end with 'ago'")
	}
	if future && past {
		return "", nil, fail("Time cannot have both 'in' and 'ago'")
	}
	switch {
	case future:
		parts = parts[1:]
	case past:
		parts = parts[:len(parts)-1]
	default:
		parts = nil
	}
	if len(parts)%2 != 0 {
		return "", nil, fail("Invalid time string. Dangling unit or number.")
	}
	seconds := 0.0
	for i := 0; i < len(parts); i += 2 {
		num, unit := parts[i], parts[i+1]
		n, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsInf(n, 0) || n != math.Trunc(n) {
			return "", nil, fail("'" + num + "' is not an integer.")
		}
		s, ok := unitSeconds[unit]
		if !ok {
			return "", nil, fail("Invalid interval: '" + unit + "'")
		}
		seconds += n * s
	}
	if past {
		seconds = -seconds
	}
	// Keep the result inside the years TimeLayout can print.
	now := p.opts.Now().UTC()
	const limit = 9000 * 31536000.0
	if math.Abs(seconds) > limit {
		return "", nil, fail("Time is out of range.")
	}
	// Seconds, not a Duration: a Duration overflows after 292 years.
	t := time.Unix(now.Unix()+int64(seconds), int64(now.Nanosecond())).UTC()
	if t.Year() < 1 || t.Year() > 9999 {
		return "", nil, fail("Time is out of range.")
	}
	return text, schema.Date(schema.FormatTime(t)), nil
}
