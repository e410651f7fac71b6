package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/tidwall/gjson"
)

// liveConn is one WebSocket connection and what its reader saw.
type liveConn struct {
	ws         *websocket.Conn
	done       chan struct{}
	events     atomic.Int64
	fromCommit []time.Duration // read after done
	fromSend   []time.Duration
	err        string
}

const handshakeTimeout = 30 * time.Second

func wsURL(rest string) string { return "ws://" + strings.TrimPrefix(rest, "http://") }

// dialAll opens o.conns connections, conn c to instance c mod N, each
// sending connect with the master key and awaiting connected.
func dialAll(o *options, ins []*instance) ([]*liveConn, error) {
	conns := make([]*liveConn, o.conns)
	idx := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range idx {
				lc, err := dial(ins[c%len(ins)])
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("connection %d: %w", c, err)
				}
				conns[c] = lc
				mu.Unlock()
			}
		}()
	}
	for c := range o.conns {
		idx <- c
	}
	close(idx)
	wg.Wait()
	var open []*liveConn
	for _, c := range conns {
		if c != nil {
			open = append(open, c)
		}
	}
	return open, first
}

func dial(in *instance) (*liveConn, error) {
	d := websocket.Dialer{HandshakeTimeout: handshakeTimeout, ReadBufferSize: 4096, WriteBufferSize: 4096}
	ws, _, err := d.Dial(wsURL(in.URL), http.Header{})
	if err != nil {
		return nil, err
	}
	lc := &liveConn{ws: ws, done: make(chan struct{})}
	if err := lc.send(map[string]any{"op": "connect", "applicationId": appID, "masterKey": masterKey}); err != nil {
		ws.Close()
		return nil, err
	}
	ws.SetReadDeadline(time.Now().Add(handshakeTimeout))
	_, msg, err := ws.ReadMessage()
	if err != nil || gjson.GetBytes(msg, "op").String() != "connected" {
		ws.Close()
		return nil, fmt.Errorf("connect: %v %.200s", err, msg)
	}
	return lc, nil
}

func (lc *liveConn) send(v any) error {
	b, _ := json.Marshal(v)
	lc.ws.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	return lc.ws.WriteMessage(websocket.TextMessage, b)
}

// subscribeAll gives connection c the subscriptions c, c+conns, ... in
// one pipelined burst per connection, 64 connections at a time, and awaits
// every subscribed reply.
func subscribeAll(conns []*liveConn, m *model, nConns int) error {
	idx := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range idx {
				if err := conns[c].subscribe(m, c, len(conns)); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("connection %d: %w", c, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for c := range conns {
		idx <- c
	}
	close(idx)
	wg.Wait()
	return first
}

func (lc *liveConn) subscribe(m *model, c, stride int) error {
	n := 0
	for i := c; i < m.total(); i += stride {
		class, where := m.where(i)
		if err := lc.send(map[string]any{"op": "subscribe", "requestId": i + 1,
			"query": map[string]any{"className": class, "where": where}}); err != nil {
			return err
		}
		n++
	}
	lc.ws.SetReadDeadline(time.Now().Add(2 * time.Minute))
	for n > 0 {
		_, msg, err := lc.ws.ReadMessage()
		if err != nil {
			return err
		}
		switch gjson.GetBytes(msg, "op").String() {
		case "subscribed":
			n--
		case "error":
			return fmt.Errorf("subscribe: %.300s", msg)
		}
	}
	lc.ws.SetReadDeadline(time.Time{})
	return nil
}

// read counts create events per write (got[seq]) and their latency,
// until the connection closes.
func (lc *liveConn) read(got []atomic.Int32) {
	defer close(lc.done)
	for {
		_, msg, err := lc.ws.ReadMessage()
		at := time.Now()
		if err != nil {
			if !strings.Contains(err.Error(), "use of closed") {
				lc.err = err.Error()
			}
			return
		}
		r := gjson.ParseBytes(msg)
		switch r.Get("op").String() {
		case "create":
		case "error":
			lc.err = string(msg)
			continue
		default:
			continue
		}
		seq := r.Get("object.seq").Int()
		if seq >= 0 && seq < int64(len(got)) {
			got[seq].Add(1)
		}
		lc.events.Add(1)
		if created, err := time.Parse(time.RFC3339Nano, r.Get("object.createdAt").String()); err == nil {
			lc.fromCommit = append(lc.fromCommit, at.Sub(created))
		}
		if sent := r.Get("object.at").Int(); sent > 0 {
			lc.fromSend = append(lc.fromSend, at.Sub(time.Unix(0, sent)))
		}
	}
}

func (lc *liveConn) close() {
	lc.ws.Close()
	select {
	case <-lc.done:
	case <-time.After(time.Second): // the reader was never started
	}
}
