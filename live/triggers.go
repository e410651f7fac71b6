package live

import (
	"encoding/json"
	"errors"

	"github.com/quarrydata/quarry/schema"
)

// Triggers are cloud code's LiveQuery triggers. live calls them; the
// server wires cloud code in (live never imports cloud). Options.Triggers
// nil runs none.
type Triggers interface {
	// BeforeConnect may refuse a connection with an error.
	BeforeConnect(req *ConnectRequest) error
	// BeforeSubscribe may refuse a subscription, or change its Where and
	// Keys.
	BeforeSubscribe(req *SubscribeRequest) error
	// HasAfterEvent reports whether AfterEvent runs for class; only then
	// is an event encoded for each subscriber apart.
	HasAfterEvent(class string) bool
	// AfterEvent runs before an event reaches one subscriber: it may
	// replace Object and Original, or set Suppress.
	AfterEvent(req *EventRequest) error
}

// ConnectRequest is a connect's beforeConnect.
type ConnectRequest struct {
	SessionToken, InstallationID, IP string
	Master                           bool
	Clients, Subscriptions           int // the server's, before this one
}

// SubscribeRequest is a subscribe's (or update's) beforeSubscribe.
type SubscribeRequest struct {
	Class        string
	Where        map[string]any
	Keys         []string
	SessionToken string
	Master       bool
	IP           string
}

// EventRequest is one event on its way to one subscriber.
type EventRequest struct {
	Event            string // create, enter, update, leave, delete
	Class            string
	Object, Original schema.Object
	SessionToken     string
	Master           bool
	Suppress         bool
}

// triggerError turns a trigger's refusal into the error message sent.
func triggerError(err error, requestID string) *protoError {
	var pe *schema.Error
	if errors.As(err, &pe) {
		return &protoError{code: pe.Code, msg: pe.Message, requestID: json.Number(requestID)}
	}
	return &protoError{code: schema.CodeScriptFailed, msg: "cloud code refused", requestID: json.Number(requestID)}
}
