package push_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarrydata/quarry/push"
	"github.com/quarrydata/quarry/push/pushtest"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// seedInstallations opens an in-memory service holding n installations
// (half ios, half android) with device tokens.
func seedInstallations(tb testing.TB, n int) *service.Service {
	tb.Helper()
	adapter, err := store.Open(store.MemoryURI)
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := service.Open(adapter, service.Options{BatchSize: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { adapter.Close() })
	master := service.Auth{Master: true}
	for start := 0; start < n; start += 1000 {
		var ops []service.WriteOp
		for i := start; i < min(n, start+1000); i++ {
			typ := "ios"
			if i%2 == 1 {
				typ = "android"
			}
			ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: "_Installation", Body: map[string]any{
				"installationId": fmt.Sprintf("3f1b6c2e-0000-4000-8000-%012d", i), "deviceType": typ,
				"deviceToken": fmt.Sprintf("token%08d", i), "channels": []any{"all"},
			}})
		}
		if _, err := svc.WriteAll(master, ops); err != nil {
			tb.Fatal(err)
		}
	}
	return svc
}

// peakHeap samples the heap in use until stop is closed.
func peakHeap(stop <-chan struct{}, peak *atomic.Uint64) {
	var m runtime.MemStats
	for {
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
		select {
		case <-stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Benchmark_Push_Log_Channels sends one channels push to every
// installation through the log adapter: pushes/s is devices per second,
// peak-heap-MB the most heap in use while sending (the store included).
func Benchmark_Push_Log_Channels(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("installations=%d", n), func(b *testing.B) {
			svc := seedInstallations(b, n)
			sender := push.NewSender(svc, &push.LogAdapter{}, push.Options{})
			defer sender.Close()
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			go peakHeap(stop, &peak)
			b.ResetTimer()
			var id string
			for range b.N {
				var err error
				if id, err = sender.Send(service.Auth{Master: true},
					map[string]any{"channels": []any{"all"}, "data": map[string]any{"alert": "hi"}}); err != nil {
					b.Fatal(err)
				}
				sender.Wait()
			}
			b.StopTimer()
			close(stop)
			st, err := svc.Get(service.Auth{Master: true}, service.ClassPushStatus, id, service.ReadOptions{})
			if err != nil || st["status"] != push.StatusSucceeded || st["numSent"] != float64(n) {
				b.Fatalf("status %v (%v), want %d sent", st, err, n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pushes/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(base.HeapInuse)/(1<<20), "seeded-heap-MB")
		})
	}
}

// Benchmark_Push_Native_Channels sends one channels push to every
// installation (half ios, half android) through the APNs and FCM adapters
// against local servers speaking their protocols: APNs over HTTP/2 with
// token auth, FCM HTTP v1 with its OAuth exchange. Run it with
// -benchtime 1x: one push to 100,000 devices is 100,000 HTTP requests.
func Benchmark_Push_Native_Channels(b *testing.B) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	apnsServer := pushtest.NewAPNs(&key.PublicKey, "KEY123", "TEAM456", nil, 0)
	defer apnsServer.Close()
	fcmServer, err := pushtest.NewFCM(0)
	if err != nil {
		b.Fatal(err)
	}
	defer fcmServer.Close()
	apns, err := push.NewAPNs(push.APNsOptions{RootCAs: apnsServer.Trust(nil), Providers: []push.APNsProvider{{
		Topic: "com.example.app", Production: true, URL: apnsServer.URL, KeyID: "KEY123", TeamID: "TEAM456",
		TokenKey: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})}}})
	if err != nil {
		b.Fatal(err)
	}
	fcm, err := push.NewFCM(push.FCMOptions{ServiceAccount: fcmServer.ServiceAccount(), Endpoint: fcmServer.URL})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("installations=%d", n), func(b *testing.B) {
			svc := seedInstallations(b, n)
			sender := push.NewSender(svc, push.RouterAdapter{ByType: map[string]push.Adapter{"ios": apns}, Default: fcm}, push.Options{})
			defer sender.Close()
			runtime.GC()
			var peak atomic.Uint64
			stop := make(chan struct{})
			go peakHeap(stop, &peak)
			delivered := apnsServer.Delivered() + fcmServer.Delivered()
			b.ResetTimer()
			var id string
			for range b.N {
				if id, err = sender.Send(service.Auth{Master: true},
					map[string]any{"channels": []any{"all"}, "data": map[string]any{"alert": "hi", "badge": 1.0}}); err != nil {
					b.Fatal(err)
				}
				sender.Wait()
			}
			b.StopTimer()
			close(stop)
			st, err := svc.Get(service.Auth{Master: true}, service.ClassPushStatus, id, service.ReadOptions{})
			sent, _ := st["sentPerType"].(map[string]any)
			if err != nil || st["status"] != push.StatusSucceeded || st["numSent"] != float64(n) ||
				sent["ios"] != float64(n/2) || sent["android"] != float64(n/2) {
				b.Fatalf("status %v (%v), want %d sent, half per type", st, err, n)
			}
			if got := apnsServer.Delivered() + fcmServer.Delivered() - delivered; got != int64(n*b.N) {
				b.Fatalf("the servers accepted %d messages, want %d", got, n*b.N)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pushes/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		})
	}
}
