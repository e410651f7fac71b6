package push

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Limits and defaults of the sender.
const (
	// DefaultPageSize is how many installations one query reads: memory
	// stays bounded by it whatever the audience.
	DefaultPageSize = 1000
	// DefaultBatchSize is the most devices one Adapter.Send gets.
	DefaultBatchSize = 500
	// DefaultPoll is how often the scheduler looks for due pushes.
	DefaultPoll = time.Second
)

// _PushStatus statuses.
const (
	StatusPending   = "pending"
	StatusScheduled = "scheduled"
	StatusRunning   = "running"
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
)

// Options configure a Sender; zero values take the defaults.
type Options struct {
	PageSize  int
	BatchSize int
	Poll      time.Duration
	Now       func() time.Time
	Warn      func(msg string)
	// Scheduled is scheduledPush: a future push_time waits until it comes.
	// Off, as in Parse Server, push_time is ignored (with a warning) and the
	// push is sent at once.
	Scheduled bool
}

// Sender sends pushes: it records each in _PushStatus, delivers in the
// background, and (Run) sends scheduled pushes when they are due.
type Sender struct {
	svc     *service.Service
	adapter Adapter
	opts    Options
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// master is the sender's own authority: planned like any master query.
var master = service.Auth{Master: true}

// NewSender returns a sender delivering through adapter.
func NewSender(svc *service.Service, adapter Adapter, opts Options) *Sender {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Sender{svc: svc, adapter: adapter, opts: opts, ctx: ctx, cancel: cancel}
}

// Scheduled reports whether a future push_time waits (scheduledPush).
func (s *Sender) Scheduled() bool { return s.opts.Scheduled }

// Adapter is the adapter the sender delivers through.
func (s *Sender) Adapter() Adapter { return s.adapter }

// Send validates a POST /push body, records its _PushStatus and starts
// delivery (now, or when push_time comes). It returns the status id.
func (s *Sender) Send(auth service.Auth, body map[string]any) (string, error) {
	if !auth.Master || auth.ReadOnly {
		return "", schema.Errorf(schema.CodeOperationForbidden, "unauthorized: master key is required")
	}
	where, err := audience(body)
	if err != nil {
		return "", err
	}
	data, err := ParseData(body["data"])
	if err != nil {
		return "", err
	}
	times, err := ParseTimes(body, s.opts.Now())
	if err != nil {
		return "", err
	}
	if times.Scheduled && !s.opts.Scheduled {
		s.warn("push: push_time is ignored and the push is sent now: scheduledPush is off")
		times.PushTime, times.Scheduled = s.opts.Now(), false
	}
	// The audience query is planned now, so a bad or refused query (102,
	// 154) fails the request rather than the push in the background.
	if _, err := s.svc.Find(master, "_Installation", pageQuery(where, "", 1)); err != nil {
		return "", err
	}
	query, _ := json.Marshal(where)
	payload, _ := json.Marshal(data)
	status := map[string]any{
		"pushTime": schema.FormatTime(times.PushTime), "query": string(query), "payload": string(payload),
		"source": "rest", "status": StatusPending, "numSent": 0.0, "ACL": map[string]any{},
	}
	if t, ok := data["title"].(string); ok {
		status["title"] = t
	}
	if !times.Expiry.IsZero() {
		status["expiry"] = float64(times.Expiry.Unix())
	}
	if times.Interval > 0 {
		status["expiration_interval"] = float64(times.Interval)
	}
	if times.Scheduled {
		status["status"] = StatusScheduled
	}
	res, err := s.svc.Create(master, service.ClassPushStatus, status)
	if err != nil {
		return "", err
	}
	if id, ok := body["audience_id"]; ok {
		s.audienceUsed(id, s.opts.Now())
	}
	if !times.Scheduled {
		s.start(res.ObjectID, where, data, times.Expiry)
	}
	return res.ObjectID, nil
}

// audienceUsed records that a push went to a saved audience (Parse
// Dashboard sends its id as audience_id): its lastUsed and timesUsed, which
// the dashboard's audience lists show. As in Parse Server the push does not
// depend on it: a failure is logged, and the push goes on.
func (s *Sender) audienceUsed(id any, at time.Time) {
	name, ok := id.(string)
	if !ok || name == "" {
		s.warn(fmt.Sprintf("push: audience_id %v is not an objectId; its use is not recorded", id))
		return
	}
	_, err := s.svc.Update(master, service.ClassAudience, name, map[string]any{
		"lastUsed":  map[string]any{"__type": "Date", "iso": schema.FormatTime(at)},
		"timesUsed": map[string]any{"__op": "Increment", "amount": 1.0},
	})
	if err != nil {
		s.warn(fmt.Sprintf("push: recording the use of audience %s: %v", name, err))
	}
}

// audience turns where or channels into the installation query.
func audience(body map[string]any) (map[string]any, error) {
	where, hasWhere := body["where"]
	channels, hasChannels := body["channels"]
	switch {
	case hasWhere && hasChannels:
		return nil, schema.Errorf(schema.CodePushMisconfigured, "Channels and query can not be set at the same time.")
	case hasChannels:
		list, ok := channels.([]any)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidChannelsArray, "channels must be an array of strings.")
		}
		for _, c := range list {
			if _, isStr := c.(string); !isStr {
				return nil, schema.Errorf(schema.CodeInvalidChannelsArray, "channels must be an array of strings.")
			}
		}
		return map[string]any{"channels": map[string]any{"$in": list}}, nil
	case hasWhere:
		m, ok := where.(map[string]any)
		if !ok {
			return nil, schema.Errorf(schema.CodeInvalidQuery, "where must be an object.")
		}
		return m, nil
	}
	return nil, schema.Errorf(schema.CodePushMisconfigured, "Sending a push requires either \"channels\" or a \"where\" query.")
}

// start delivers in the background; Close waits for it.
func (s *Sender) start(id string, where map[string]any, data Data, expiry time.Time) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deliver(id, where, data, expiry)
	}()
}

// Close stops the scheduler and waits for deliveries under way (they stop
// at their next batch).
func (s *Sender) Close() {
	s.cancel()
	s.wg.Wait()
}

// Wait waits for the deliveries under way to end (tests, benchmarks).
func (s *Sender) Wait() { s.wg.Wait() }

func (s *Sender) setStatus(id string, body map[string]any) {
	if _, err := s.svc.Update(master, service.ClassPushStatus, id, body); err != nil {
		s.warn(fmt.Sprintf("push status %s: %v", id, err))
	}
}

func (s *Sender) warn(msg string) {
	if s.opts.Warn != nil {
		s.opts.Warn(msg)
	}
}
