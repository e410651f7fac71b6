package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/quarrydata/quarry/service"
)

// panickyAuthority fails like a bug would: on the token "boom", and when
// a change of class "Boom" is dispatched.
type panickyAuthority struct{ openAuthority }

func (a panickyAuthority) Authenticate(ctx context.Context, token string) (Identity, error) {
	if token == "boom" {
		panic("injected: authenticate")
	}
	return a.openAuthority.Authenticate(ctx, token)
}

func (a panickyAuthority) ReadFilter(id Identity, class, op string, clp map[string]any) (service.ReadFilter, error) {
	if class == "Boom" && clp != nil { // a change's CLP: only dispatch passes one
		panic("injected: read filter")
	}
	return a.openAuthority.ReadFilter(id, class, op, clp)
}

// TestPanicsAreContained: a panic while serving one client closes that
// client, a panic while dispatching drops that change; the server, its
// other clients and later changes go on.
func TestPanicsAreContained(t *testing.T) {
	s, url := serveBare(t, Options{Authority: panickyAuthority{}, Dispatchers: 1})
	victim, other := rawDial(t, url), rawDial(t, url)
	for _, c := range []*websocket.Conn{victim, other} {
		rawRoundTrip(t, c, `{"op":"connect","applicationId":"x"}`, "connected")
	}
	if err := victim.WriteMessage(websocket.TextMessage, []byte(`{"op":"subscribe","requestId":1,"sessionToken":"boom","query":{"className":"A","where":{}}}`)); err != nil {
		t.Fatal(err)
	}
	victim.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := victim.ReadMessage()
	var ce *websocket.CloseError
	if !asClose(err, &ce) || ce.Code != websocket.CloseInternalServerErr {
		t.Fatalf("the panicking client's connection ended with %v, want close 1011", err)
	}
	rawRoundTrip(t, other, `{"op":"subscribe","requestId":1,"query":{"className":"Boom","where":{}}}`, "subscribed")
	rawRoundTrip(t, other, `{"op":"subscribe","requestId":2,"query":{"className":"Fine","where":{}}}`, "subscribed")
	s.Publish(Change{Class: "Boom", Object: map[string]any{"objectId": "b1"}, CLP: map[string]any{}})
	s.Publish(Change{Class: "Fine", Object: map[string]any{"objectId": "f1"}})
	other.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := other.ReadMessage()
	if err != nil || !strings.Contains(string(data), `"f1"`) || !strings.Contains(string(data), `"op":"create"`) {
		t.Fatalf("after a dispatch panic the next change gave %s, %v", data, err)
	}
	if n := s.Stats().Panics; n != 2 {
		t.Errorf("Stats().Panics = %d, want 2", n)
	}
}

func asClose(err error, ce **websocket.CloseError) bool {
	c, ok := err.(*websocket.CloseError)
	*ce = c
	return ok
}
