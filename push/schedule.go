package push

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// StartScheduler polls _PushStatus for scheduled pushes that are due and
// sends them, until Close.
func (s *Sender) StartScheduler() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		tick := time.NewTicker(s.opts.Poll)
		defer tick.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-tick.C:
				s.SendDue()
			}
		}
	}()
}

// SendDue starts every scheduled push whose pushTime has come.
func (s *Sender) SendDue() {
	now := schema.FormatTime(s.opts.Now())
	res, err := s.svc.Find(master, service.ClassPushStatus, service.FindParams{
		Where: map[string]any{"status": StatusScheduled, "pushTime": map[string]any{"$lte": now}},
		Order: []service.SortKey{{Path: "pushTime"}}, Limit: 100,
	})
	if err != nil {
		s.warn(fmt.Sprintf("push scheduler: %v", err))
		return
	}
	type due struct {
		id, query, payload string
		expiry             time.Time
	}
	var list []due
	for _, o := range res.Results { // stored objects: read, copy out
		d := due{}
		d.id, _ = o["objectId"].(string)
		d.query, _ = o["query"].(string)
		d.payload, _ = o["payload"].(string)
		if e, ok := wholeNumber(o["expiry"]); ok {
			d.expiry = time.Unix(e, 0)
		}
		list = append(list, d)
	}
	for _, d := range list {
		var where map[string]any
		var data Data
		if json.Unmarshal([]byte(d.query), &where) != nil || json.Unmarshal([]byte(d.payload), &data) != nil {
			s.setStatus(d.id, map[string]any{"status": StatusFailed, "errorMessage": map[string]any{"message": "unreadable query or payload"}})
			continue
		}
		// Claimed before starting, so the next poll does not start it again.
		s.setStatus(d.id, map[string]any{"status": StatusPending})
		s.start(d.id, where, data, d.expiry)
	}
}

// interruptedMessage is the errorMessage of a push a stopped process left
// pending or running.
const interruptedMessage = "the server stopped while sending"

// FailInterrupted marks failed the pushes a previous process left pending
// or running (a crash, a kill): nothing will finish them. Call it once at
// start-up, before any push is sent. It returns how many it marked.
func (s *Sender) FailInterrupted() (int, error) {
	n := 0
	for {
		res, err := s.svc.Find(master, service.ClassPushStatus, service.FindParams{
			Where: map[string]any{"status": map[string]any{"$in": []any{StatusPending, StatusRunning}}}, Limit: 100,
		})
		if err != nil || len(res.Results) == 0 {
			return n, err
		}
		ids := make([]string, 0, len(res.Results))
		for _, o := range res.Results {
			id, _ := o["objectId"].(string)
			ids = append(ids, id)
		}
		for _, id := range ids {
			if _, err := s.svc.Update(master, service.ClassPushStatus, id, map[string]any{
				"status": StatusFailed, "errorMessage": map[string]any{"message": interruptedMessage},
			}); err != nil {
				return n, err
			}
			n++
		}
	}
}
