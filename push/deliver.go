package push

import (
	"fmt"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// tally counts outcomes by deviceType for _PushStatus.
type tally struct {
	sent, failed       int
	sentPer, failedPer map[string]any
	reasons            map[string]any
}

func newTally() *tally {
	return &tally{sentPer: map[string]any{}, failedPer: map[string]any{}, reasons: map[string]any{}}
}

func bump(m map[string]any, k string) { n, _ := m[k].(float64); m[k] = n + 1 }

func (t *tally) add(deviceType string, r Result) {
	if r.Outcome == Sent {
		t.sent++
		bump(t.sentPer, deviceType)
		return
	}
	t.failed++
	bump(t.failedPer, deviceType)
	reason := r.Reason
	if reason == "" {
		reason = "failed"
	}
	bump(t.reasons, reason)
}

// deliver sends one push: running, then succeeded or failed with counts.
func (s *Sender) deliver(id string, where map[string]any, data Data, expiry time.Time) {
	s.setStatus(id, map[string]any{"status": StatusRunning})
	t := newTally()
	var err error
	if !expiry.IsZero() && !s.opts.Now().Before(expiry) {
		err = fmt.Errorf("the push expired before it was sent")
	} else {
		n := Notification{StatusID: id, Data: data}
		if !expiry.IsZero() {
			n.Expiry = expiry.Unix()
		}
		err = s.walk(where, func(page []Device) error { return s.sendPage(n, page, t) })
	}
	end := map[string]any{"status": StatusSucceeded, "numSent": float64(t.sent), "numFailed": float64(t.failed),
		"sentPerType": t.sentPer, "failedPerType": t.failedPer, "count": float64(t.sent + t.failed)}
	if len(t.reasons) > 0 {
		end["errorMessage"] = map[string]any{"reasons": t.reasons}
	}
	if err != nil {
		msg := err.Error()
		if pe, ok := schema.AsError(err); ok {
			msg = pe.Message
		}
		end["status"] = StatusFailed
		end["errorMessage"] = map[string]any{"message": msg, "reasons": t.reasons}
	}
	s.setStatus(id, end)
}

// pageQuery is the query of one page of the audience: the installations
// with a deviceToken that where matches, after the objectId after.
func pageQuery(where map[string]any, after string, limit int) service.FindParams {
	clauses := []any{where, map[string]any{"deviceToken": map[string]any{"$exists": true}}}
	if after != "" {
		clauses = append(clauses, map[string]any{"objectId": map[string]any{"$gt": after}})
	}
	return service.FindParams{Where: map[string]any{"$and": clauses}, Order: []service.SortKey{{Path: "objectId"}}, Limit: limit}
}

// walk reads the audience in pages ordered by objectId (each page starts
// after the last id seen), so memory holds one page whatever its size.
// Only installations with a deviceToken receive pushes.
func (s *Sender) walk(where map[string]any, page func([]Device) error) error {
	after := ""
	for {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("the server shut down while sending")
		}
		res, err := s.svc.Find(master, "_Installation", pageQuery(where, after, s.opts.PageSize))
		if err != nil {
			return err
		}
		if len(res.Results) == 0 {
			return nil
		}
		devices := make([]Device, 0, len(res.Results))
		for _, o := range res.Results {
			d := Device{}
			d.ObjectID, _ = o["objectId"].(string)
			d.DeviceType, _ = o["deviceType"].(string)
			d.DeviceToken, _ = o["deviceToken"].(string)
			d.AppIdentifier, _ = o["appIdentifier"].(string)
			d.Locale, _ = o["localeIdentifier"].(string)
			if b, ok := wholeNumber(o["badge"]); ok {
				d.Badge = int(b)
			}
			devices = append(devices, d)
		}
		after = devices[len(devices)-1].ObjectID
		if err := page(devices); err != nil {
			return err
		}
	}
}

// sendPage resolves badges, groups a page by deviceType and sends each
// group in batches.
func (s *Sender) sendPage(n Notification, page []Device, t *tally) error {
	s.resolveBadges(n.Data, page)
	groups := map[string][]Device{}
	var order []string
	for _, d := range page {
		if _, seen := groups[d.DeviceType]; !seen {
			order = append(order, d.DeviceType)
		}
		groups[d.DeviceType] = append(groups[d.DeviceType], d)
	}
	for _, typ := range order {
		group := groups[typ]
		for len(group) > 0 {
			k := min(len(group), s.opts.BatchSize)
			if err := s.sendBatch(n, group[:k], t); err != nil {
				return err
			}
			group = group[k:]
		}
	}
	return nil
}

func (s *Sender) sendBatch(n Notification, batch []Device, t *tally) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("the server shut down while sending")
	}
	results, err := s.adapter.Send(s.ctx, n, batch)
	if err != nil {
		for range batch {
			t.add(batch[0].DeviceType, Result{Outcome: Failed, Reason: err.Error()})
		}
		return nil
	}
	seen := make(map[string]bool, len(results))
	for _, r := range results {
		seen[r.ObjectID] = true
		t.add(batch[0].DeviceType, r)
		if r.Outcome == BadToken {
			s.clearToken(r.ObjectID)
		}
	}
	for _, d := range batch {
		if !seen[d.ObjectID] {
			t.add(d.DeviceType, Result{ObjectID: d.ObjectID, Outcome: Failed, Reason: "no result from the adapter"})
		}
	}
	return nil
}

// resolveBadges sets each device's badge: the payload's number, or the
// installation's badge incremented through the service (so ACL, triggers
// and LiveQuery see an ordinary update).
func (s *Sender) resolveBadges(data Data, page []Device) {
	v, ok := data["badge"]
	if !ok {
		return
	}
	if n, isNum := wholeNumber(v); isNum {
		for i := range page {
			page[i].Badge, page[i].HasBadge = int(n), true
		}
		return
	}
	for i := range page {
		reply, err := s.svc.Update(master, "_Installation", page[i].ObjectID,
			map[string]any{"badge": map[string]any{"__op": "Increment", "amount": 1.0}})
		if err != nil {
			s.warn(fmt.Sprintf("push: badge of installation %s: %v", page[i].ObjectID, err))
			page[i].Badge++
		} else if b, ok := wholeNumber(reply.Echo["badge"]); ok {
			page[i].Badge = int(b)
		} else {
			page[i].Badge++
		}
		page[i].HasBadge = true
	}
}

// clearToken removes a dead device token from its installation.
func (s *Sender) clearToken(objectID string) {
	_, err := s.svc.Update(master, "_Installation", objectID, map[string]any{"deviceToken": map[string]any{"__op": "Delete"}})
	if err != nil {
		s.warn(fmt.Sprintf("push: clearing the token of installation %s: %v", objectID, err))
	}
}
