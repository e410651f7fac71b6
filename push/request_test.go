package push

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
)

func TestParseTimes(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := now.Add(time.Hour)
	cases := []struct {
		name      string
		body      map[string]any
		code      int // 0: valid
		scheduled bool
		expiry    time.Time
	}{
		{"none", map[string]any{}, 0, false, time.Time{}},
		{"future push_time", map[string]any{"push_time": "2026-01-02T04:04:05Z"}, 0, true, time.Time{}},
		{"past push_time sends now", map[string]any{"push_time": "2025-01-02T04:04:05.000Z"}, 0, false, time.Time{}},
		{"date object", map[string]any{"push_time": map[string]any{"__type": "Date", "iso": "2026-01-02T04:04:05.000Z"}}, 0, true, time.Time{}},
		{"unix seconds", map[string]any{"push_time": float64(later.Unix())}, 0, true, time.Time{}},
		{"expiration_time", map[string]any{"expiration_time": "2026-01-02T04:04:05Z"}, 0, false, later},
		{"interval", map[string]any{"expiration_interval": 3600.0}, 0, false, later},
		{"interval after push_time", map[string]any{"push_time": "2026-01-02T04:04:05Z", "expiration_interval": 60.0}, 0, true, later.Add(time.Minute)},
		{"unreadable push_time", map[string]any{"push_time": "soon"}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"boolean push_time", map[string]any{"push_time": true}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"expiry in the past", map[string]any{"expiration_time": "2020-01-01T00:00:00Z"}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"expiry before push_time", map[string]any{"push_time": "2026-01-02T05:00:00Z", "expiration_time": "2026-01-02T04:00:00Z"}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"both expirations", map[string]any{"expiration_time": "2026-01-02T04:04:05Z", "expiration_interval": 60.0}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"zero interval", map[string]any{"expiration_interval": 0.0}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"fractional interval", map[string]any{"expiration_interval": 1.5}, schema.CodeInvalidPushTime, false, time.Time{}},
		{"huge interval", map[string]any{"expiration_interval": 1e9}, schema.CodeInvalidPushTime, false, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTimes(c.body, now)
			if c.code != 0 {
				if pe, ok := schema.AsError(err); !ok || pe.Code != c.code {
					t.Fatalf("error %v, want code %d", err, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Scheduled != c.scheduled || !got.Expiry.Equal(c.expiry) {
				t.Errorf("got scheduled %v expiry %v, want %v %v", got.Scheduled, got.Expiry, c.scheduled, c.expiry)
			}
		})
	}
}

func TestParseData(t *testing.T) {
	cases := []struct {
		name string
		data any
		code int
	}{
		{"full", map[string]any{"alert": "hi", "badge": "Increment", "sound": "a.caf", "content-available": 1.0,
			"category": "c", "uri": "app://x", "title": "t", "custom": map[string]any{"k": 1.0}}, 0},
		{"alert object", map[string]any{"alert": map[string]any{"body": "b"}, "badge": 3.0}, 0},
		{"missing", nil, schema.CodePushMisconfigured},
		{"not an object", "hi", schema.CodePushMisconfigured},
		{"badge word", map[string]any{"badge": "Decrement"}, schema.CodeInvalidJSON},
		{"badge fraction", map[string]any{"badge": 1.5}, schema.CodeInvalidJSON},
		{"content-available 2", map[string]any{"content-available": 2.0}, schema.CodeInvalidJSON},
		{"alert number", map[string]any{"alert": 1.0}, schema.CodeInvalidJSON},
		{"sound object", map[string]any{"sound": map[string]any{}}, schema.CodeInvalidJSON},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseData(c.data)
			if c.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if pe, ok := schema.AsError(err); !ok || pe.Code != c.code {
				t.Fatalf("error %v, want code %d", err, c.code)
			}
		})
	}
}

func TestPayloadResolvesBadge(t *testing.T) {
	n := Notification{Data: Data{"alert": "hi", "badge": BadgeIncrement}}
	p := n.Payload(Device{Badge: 7, HasBadge: true})
	if p["badge"] != 7 || p["alert"] != "hi" || n.Data["badge"] != BadgeIncrement {
		t.Errorf("payload %v, data %v", p, n.Data)
	}
}
