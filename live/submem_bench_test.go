package live

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// BenchmarkSubscriptionMemory reports the heap one subscription holds:
// 20 connections of 1,000 subscriptions each, every query distinct,
// measured as the heap's growth after a GC.
func BenchmarkSubscriptionMemory(b *testing.B) {
	const conns, perConn = 20, 1000
	for range b.N {
		_, url := serveBare(b, Options{})
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		var cs []*websocket.Conn
		for i := range conns {
			c := rawDial(b, url)
			cs = append(cs, c)
			rawRoundTrip(b, c, `{"op":"connect","applicationId":"x"}`, "connected")
			for j := range perConn {
				msg := fmt.Sprintf(`{"op":"subscribe","requestId":%d,"query":{"className":"C","where":{"n":%d,"tag":"t%d"}}}`, j+1, i*perConn+j, j%7)
				if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
					b.Fatal(err)
				}
			}
			for range perConn {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				if _, _, err := c.ReadMessage(); err != nil {
					b.Fatal(err)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(ms1.HeapAlloc-ms0.HeapAlloc)/(conns*perConn), "heap-B/subscription")
		for _, c := range cs {
			c.Close()
		}
	}
}
