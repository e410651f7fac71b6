package service_test

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/service"
)

// TestSlowChangeConsumerStallsNoOtherWrite: while the consumer of changes
// (LiveQuery) is stuck delivering one change, writes to another class and
// to the very same object still commit and answer; once it is unstuck,
// every change arrives, in commit order.
func TestSlowChangeConsumerStallsNoOtherWrite(t *testing.T) {
	stuck, entered := make(chan struct{}), make(chan struct{})
	got := make(chan service.Change, 16)
	s := openTestService(t, service.Options{AllowClientClassCreation: true, OnChange: func(c service.Change) {
		if c.Class == "Slow" && c.Original == nil {
			close(entered)
			<-stuck // the first change of Slow blocks its consumer
		}
		got <- c
	}})
	first := make(chan string, 1)
	go func() {
		res, err := s.Create(service.Auth{}, "Slow", map[string]any{"n": 1.0})
		if err != nil {
			t.Error(err)
		}
		first <- res.ObjectID
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first change never reached its consumer")
	}
	res, err := s.Find(service.Auth{Master: true}, "Slow", service.FindParams{Limit: -1})
	if err != nil || len(res.Results) != 1 {
		t.Fatalf("find the first object: %v %v", res.Results, err)
	}
	id, _ := res.Results[0]["objectId"].(string)
	done := make(chan error, 2)
	go func() {
		_, err := s.Create(service.Auth{}, "Other", map[string]any{"n": 2.0})
		done <- err
	}()
	go func() {
		_, err := s.Update(service.Auth{}, "Slow", id, map[string]any{"n": 3.0})
		done <- err
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a write waited for a stuck change consumer")
		}
	}
	close(stuck)
	<-first
	var order []string
	for range 3 {
		select {
		case c := <-got:
			order = append(order, c.Class)
			if c.Class == "Slow" && c.Original != nil && c.Object["n"] != 3.0 {
				t.Errorf("the update's change carries %v", c.Object)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("changes delivered: %v, want 3", order)
		}
	}
	if order[0] != "Slow" {
		t.Errorf("delivery order %v: the first commit must come first", order)
	}
	slowAt, updateSeen := -1, false
	for i, c := range order {
		if c == "Slow" {
			if slowAt >= 0 {
				updateSeen = true
			}
			slowAt = i
		}
	}
	if !updateSeen {
		t.Errorf("delivery order %v lacks the update of Slow after its create", order)
	}
}
