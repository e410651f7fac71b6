package service_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// TestRequestIDsExpire: a claimed id is refused with 159 until its TTL
// passes (on the injected clock), and expired entries are swept by later
// claims so the class stays near its live size.
func TestRequestIDsExpire(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openTestService(t, service.Options{Now: func() time.Time { return now }})
	ttl := 5 * time.Minute
	if err := s.ClaimRequest("a", ttl); err != nil {
		t.Fatal(err)
	}
	err := s.ClaimRequest("a", ttl)
	if pe, ok := schema.AsError(err); !ok || pe.Code != service.CodeDuplicateRequest || pe.Message != "Duplicate request" {
		t.Fatalf("second claim: %v, want 159 Duplicate request", err)
	}
	for i := range 40 {
		if err := s.ClaimRequest(fmt.Sprint("old-", i), ttl); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(ttl + time.Second)
	if err := s.ClaimRequest("a", ttl); err != nil {
		t.Fatalf("a claim after the TTL: %v", err)
	}
	// Each claim sweeps up to 16 expired entries: three more claims clear
	// the 40 old ones.
	for i := range 3 {
		if err := s.ClaimRequest(fmt.Sprint("new-", i), ttl); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Data().Collection(service.ClassIdempotency, false).Len(); n != 4 {
		t.Errorf("%d entries kept, want the 4 live ones", n)
	}
	if err := s.ReleaseRequest("new-0"); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimRequest("new-0", ttl); err != nil {
		t.Errorf("a released id is refused: %v", err)
	}
}
