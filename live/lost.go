package live

import (
	"encoding/json"

	"github.com/fasthttp/websocket"
)

// CodeChangesLost is the error frame sent to clients whose subscriptions
// may have missed changes (the Redis feed was cut or overflowed); it asks
// them to reconnect, and the connection is then closed, so the SDK
// re-subscribes and the app can fetch again on the subscriptions' "open".
const CodeChangesLost = 100

// CloseChangesLost is the close code that follows the error frame.
const CloseChangesLost = websocket.CloseTryAgainLater

// ChangesLost implements LossNotifier: every client with a subscription
// on one of classes (on any class when classes is empty) gets an error
// frame asking it to reconnect, then its connection is closed.
func (s *Server) ChangesLost(classes []string) {
	affected := map[string]bool{}
	for _, c := range classes {
		affected[c] = true
	}
	msg, _ := json.Marshal(map[string]any{"op": "error", "code": CodeChangesLost, "reconnect": true, "requestId": nil,
		"error": "Some changes could not be delivered (the server lost its feed); reconnect and fetch again."})
	s.mu.Lock()
	var clients []*client
	for c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	told := 0
	for _, c := range clients {
		if !c.subscribedToAny(affected) {
			continue
		}
		told++
		c.send(msg)
		c.closeAfterFlush(CloseChangesLost, "changes lost; reconnect")
	}
	if told > 0 {
		s.log.Warn("livequery: clients asked to reconnect after lost changes", "clients", told, "classes", classes)
	}
}

// subscribedToAny reports whether the client holds a subscription on one
// of classes, or any subscription when classes is empty.
func (c *client) subscribedToAny(classes map[string]bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, sub := range c.subs {
		if len(classes) == 0 || classes[sub.query.Class()] {
			return true
		}
	}
	return false
}

// closeAfterFlush closes the connection after the messages queued so far
// are written: a nil message in the queue tells the writer to close. When
// the queue is full the connection is closed at once.
func (c *client) closeAfterFlush(code int, reason string) {
	c.closeAfter.Store(&closeFrame{code: code, reason: reason})
	if !c.send(nil) {
		c.close(code, reason)
	}
}

// closeFrame is the close status the writer sends at a nil message.
type closeFrame struct {
	code   int
	reason string
}
