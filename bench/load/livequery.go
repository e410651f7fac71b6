package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"
)

// LiveQuery timing: how long the handshake may take before the server is
// taken not to speak LiveQuery, and how long an event may take before it
// counts as lost.
const (
	liveHandshakeTimeout = 3 * time.Second
	liveEventTimeout     = 5 * time.Second
)

// liveEvent is a create event seen by a worker's socket.
type liveEvent struct {
	seq int64
	at  time.Time
}

// liveConn is one worker's LiveQuery socket, subscribed to its own objects.
type liveConn struct {
	ws     *websocket.Conn
	events chan liveEvent
	done   chan struct{}
	err    error // why the reader stopped, once done is closed
}

// liveURL derives the LiveQuery address from the REST address the way the
// JS SDK does: same host and path, ws:// for http://.
func liveURL(rest string) string {
	if s, ok := strings.CutPrefix(rest, "https://"); ok {
		return "wss://" + s
	}
	return "ws://" + strings.TrimPrefix(rest, "http://")
}

// dialLive connects, authenticates with the master key and subscribes to
// creates of class where {worker, run}. Any failure here means the server
// does not (yet) speak LiveQuery.
func dialLive(e *env, wsURL, class string, worker int, run string) (*liveConn, error) {
	dialer := websocket.Dialer{HandshakeTimeout: liveHandshakeTimeout}
	ws, resp, err := dialer.Dial(wsURL, http.Header{})
	if err != nil {
		status := ""
		if resp != nil {
			status = fmt.Sprintf(" (HTTP %d)", resp.StatusCode)
		}
		return nil, fmt.Errorf("%w: no LiveQuery WebSocket at %s%s: %v", errUnsupported, wsURL, status, err)
	}
	fail := func(format string, args ...any) (*liveConn, error) {
		ws.Close()
		return nil, fmt.Errorf("%w: "+format, append([]any{errUnsupported}, args...)...)
	}
	send := func(v any) error {
		b, _ := json.Marshal(v)
		ws.SetWriteDeadline(time.Now().Add(liveHandshakeTimeout))
		return ws.WriteMessage(websocket.TextMessage, b)
	}
	await := func(want string) (gjson.Result, error) {
		ws.SetReadDeadline(time.Now().Add(liveHandshakeTimeout))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			return gjson.Result{}, err
		}
		r := gjson.ParseBytes(msg)
		if op := r.Get("op").String(); op != want {
			return r, fmt.Errorf("got %s", clip(string(msg), 160))
		}
		return r, nil
	}
	if err := send(map[string]any{"op": "connect", "applicationId": e.t.appID, "masterKey": e.t.masterKey}); err != nil {
		return fail("connect: %v", err)
	}
	if _, err := await("connected"); err != nil {
		return fail("connect: %v", err)
	}
	sub := map[string]any{"op": "subscribe", "requestId": 1, "query": map[string]any{
		"className": class, "where": map[string]any{"worker": worker, "run": run}}}
	if err := send(sub); err != nil {
		return fail("subscribe: %v", err)
	}
	if _, err := await("subscribed"); err != nil {
		return fail("subscribe: %v", err)
	}
	ws.SetReadDeadline(time.Time{})
	lc := &liveConn{ws: ws, events: make(chan liveEvent, 64), done: make(chan struct{})}
	go lc.read()
	return lc, nil
}

func (lc *liveConn) read() {
	defer close(lc.done)
	for {
		_, msg, err := lc.ws.ReadMessage()
		at := time.Now()
		if err != nil {
			lc.err = err
			return
		}
		r := gjson.ParseBytes(msg)
		if r.Get("op").String() != "create" {
			continue
		}
		select {
		case lc.events <- liveEvent{seq: r.Get("object.seq").Int(), at: at}:
		default: // nobody waits for it any more
		}
	}
}

func (lc *liveConn) close() {
	lc.ws.Close()
	<-lc.done
}

// setupLiveQuery measures the time from sending a create to receiving its
// event on a socket subscribed to it. Each worker has its own socket and
// subscription; a lost or late event is an error.
func setupLiveQuery(e *env) (*plan, error) {
	d := e.d
	run := fmt.Sprintf("%d-%d", d.seed, time.Now().UnixNano())
	uri := e.t.uri("/classes/"+d.liveClass(), nil)
	ws := e.liveURL
	if ws == "" {
		ws = liveURL(e.t.base.String())
	}
	return &plan{
		initWorker: func(w *worker) error {
			lc, err := dialLive(e, ws, d.liveClass(), w.id, run)
			if err != nil {
				return err
			}
			w.state = lc
			return nil
		},
		closeWorker: func(w *worker) {
			if lc, ok := w.state.(*liveConn); ok {
				lc.close()
			}
		},
		op: func(w *worker) (time.Duration, error) {
			lc := w.state.(*liveConn)
			w.seq++
			seq := int64(w.seq)
			body := fmt.Appendf(nil, `{"worker":%d,"run":%q,"seq":%d}`, w.id, run, seq)
			start := time.Now()
			out, _, err := w.call(fasthttp.StatusCreated, "POST", uri, body)
			if err == nil {
				err = checkCreated(w, out)
			}
			if err != nil {
				return time.Since(start), err
			}
			timeout := time.NewTimer(liveEventTimeout)
			defer timeout.Stop()
			for {
				select {
				case ev := <-lc.events:
					if ev.seq == seq {
						return ev.at.Sub(start), nil
					}
					// An older event, late after its timeout: skip it.
				case <-lc.done:
					return time.Since(start), fmt.Errorf("LiveQuery socket closed: %v", lc.err)
				case <-timeout.C:
					return time.Since(start), fmt.Errorf("no create event within %s", liveEventTimeout)
				}
			}
		},
	}, nil
}
