// Package push owns push notifications: the Adapter a delivery service
// implements, the payload model (Data), the validation of a push request's
// times, and the Sender that walks _Installation in pages and records its
// progress in _PushStatus. It reaches data only through service, never the
// store, and never imports transport.
package push

import (
	"context"
	"strings"
	"sync"
)

// Outcome is what became of one device's notification.
type Outcome int

// Outcomes.
const (
	Sent     Outcome = iota
	Failed           // not delivered; Result.Reason says why
	BadToken         // the token is dead: the installation's deviceToken is cleared
)

// Device is one installation a notification goes to.
type Device struct {
	ObjectID      string
	DeviceType    string
	DeviceToken   string
	AppIdentifier string
	// Locale is the installation's localeIdentifier ("fr-CA"): it picks
	// the payload's localized alert and title.
	Locale string
	// Badge is the badge to show when the payload sets one: the
	// installation's new value after "Increment".
	Badge    int
	HasBadge bool
}

// Notification is what every device of one Send receives.
type Notification struct {
	// StatusID is the _PushStatus objectId.
	StatusID string
	// Data is the validated payload; its badge is resolved per device
	// (Payload).
	Data Data
	// Expiry is when delivery services should stop trying: Unix seconds,
	// 0 for none.
	Expiry int64
}

// Payload is the payload one device receives: Data with the badge
// resolved to the device's value, and the alert and title in the device's
// language when the push has them ("alert-fr", "title-fr-CA"; the full
// locale wins over its language). Localized keys are not sent.
func (n Notification) Payload(d Device) map[string]any {
	out := make(map[string]any, len(n.Data))
	localized := false
	for k, v := range n.Data {
		if isLocalizedKey(k) {
			localized = true
			continue
		}
		out[k] = v
	}
	if localized && d.Locale != "" {
		for _, base := range []string{"alert", "title"} {
			if v, ok := localizedValue(n.Data, base, d.Locale); ok {
				out[base] = v
			}
		}
	}
	if d.HasBadge {
		out["badge"] = d.Badge
	}
	return out
}

func isLocalizedKey(k string) bool {
	return strings.HasPrefix(k, "alert-") || strings.HasPrefix(k, "title-")
}

// localizedValue is base's value for locale: "alert-fr-CA", else
// "alert-fr". Locales are matched with either separator and any case.
func localizedValue(data Data, base, locale string) (any, bool) {
	locale = strings.ToLower(strings.ReplaceAll(locale, "_", "-"))
	language, _, _ := strings.Cut(locale, "-")
	var byLanguage any
	found := false
	for k, v := range data {
		tag, ok := strings.CutPrefix(k, base+"-")
		if !ok {
			continue
		}
		tag = strings.ToLower(strings.ReplaceAll(tag, "_", "-"))
		if tag == locale {
			return v, true
		}
		if tag == language {
			byLanguage, found = v, true
		}
	}
	return byLanguage, found
}

// Result is one device's outcome.
type Result struct {
	ObjectID string
	Outcome  Outcome
	Reason   string // for Failed and BadToken
}

// Adapter delivers notifications to one kind of device service. Send gets
// devices of one deviceType at a time, at most the sender's batch size,
// and returns one Result per device (a device missing from the results
// counts as failed). An error fails the whole batch.
type Adapter interface {
	Send(ctx context.Context, n Notification, devices []Device) ([]Result, error)
}

// SentBatch is one Send call a LogAdapter saw.
type SentBatch struct {
	Notification Notification
	Devices      []Device
}

// LogAdapter delivers nothing: it reports every device as sent and keeps
// what it was asked to send (a dry run for operators, a recorder for
// tests). Keep is how many batches it remembers (0: none, -1: all).
type LogAdapter struct {
	Keep int
	// Log, when set, gets one line per batch.
	Log func(msg string, args ...any)
	// BadTokens are device tokens it answers as dead (tests).
	BadTokens map[string]bool

	mu      sync.Mutex
	batches []SentBatch
}

// Send records the batch and reports each device sent.
func (a *LogAdapter) Send(ctx context.Context, n Notification, devices []Device) ([]Result, error) {
	out := make([]Result, len(devices))
	for i, d := range devices {
		out[i] = Result{ObjectID: d.ObjectID, Outcome: Sent}
		if a.BadTokens[d.DeviceToken] {
			out[i] = Result{ObjectID: d.ObjectID, Outcome: BadToken, Reason: "Unregistered"}
		}
	}
	if a.Log != nil && len(devices) > 0 {
		a.Log("push (log adapter, nothing delivered)", "status", n.StatusID, "deviceType", devices[0].DeviceType, "devices", len(devices))
	}
	a.mu.Lock()
	if a.Keep < 0 || len(a.batches) < a.Keep {
		a.batches = append(a.batches, SentBatch{Notification: n, Devices: append([]Device(nil), devices...)})
	}
	a.mu.Unlock()
	return out, nil
}

// Batches returns the batches recorded so far.
func (a *LogAdapter) Batches() []SentBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]SentBatch(nil), a.batches...)
}
