package service_test

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/service"
)

// TestPurgeLocksOnlyItsClass: while a class is held as a purge holds it,
// writes to another class go through; the held class's writes wait.
func TestPurgeLocksOnlyItsClass(t *testing.T) {
	s := openTestService(t, service.Options{AllowClientClassCreation: true})
	unlock := service.LockClass(s, "B")
	other := make(chan error, 1)
	go func() {
		_, err := s.Create(service.Auth{}, "A", map[string]any{"n": 1.0})
		other <- err
	}()
	select {
	case err := <-other:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write to class A waited for class B's lock")
	}
	held := make(chan error, 1)
	go func() {
		_, err := s.Create(service.Auth{}, "B", map[string]any{"n": 1.0})
		held <- err
	}()
	unlock()
	if err := <-held; err != nil {
		t.Fatalf("the write to B after the lock was released: %v", err)
	}
}
