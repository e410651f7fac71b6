package transport

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/logring"
)

// Context keys of what the request log line reports.
const (
	codeKey = "quarry.code" // the Parse error code answered
)

// maxRequestIDLen bounds an X-Request-Id taken from the client.
const maxRequestIDLen = 128

// requestLog writes one line per request. It never logs headers, bodies
// or query strings, so no key, session token or password can reach it.
type requestLog struct {
	log *slog.Logger
	// sample is the share of successful requests logged (errors always
	// are); seen numbers them for a deterministic sample.
	sample float64
	seen   atomic.Uint64
	slow   time.Duration // queries slower than this are logged as warnings; 0: never
}

// finish runs after a request is answered (a panic included): it echoes or
// assigns the request id (sentID is the request's X-Request-Id header),
// counts the request and writes its log line.
func (s *Server) finish(ctx *fasthttp.RequestCtx, start time.Time, sentID []byte) {
	now := time.Now() // the log record's time too
	took := now.Sub(start)
	var idBuf [2 * requestIDBytes]byte
	idBytes, fromClient := requestID(sentID, idBuf[:0])
	ctx.Response.Header.SetCanonical(headerRequestID, idBytes)
	status := ctx.Response.StatusCode()
	c, _ := ctx.UserValue(callKey).(*call)
	var family string
	if c != nil && c.routed != nil {
		// The route's first segment is the family its path names, found
		// again for free.
		family = c.routed.segs[0]
	} else {
		family = s.family(ctx.Path())
	}
	method := methodName(ctx.Method())
	s.opts.Metrics.Request(family, method, status, took)
	if c != nil && c.plan != "" {
		s.opts.Metrics.Query(c.plan, c.examined, took)
	}
	if c != nil && c.claimed != "" && status >= 400 {
		// The request did not take effect: its retry must be allowed.
		if err := s.requests.ReleaseRequest(c.claimed); err != nil {
			s.log.Error("idempotency: cannot forget a failed request's id", "err", err)
		}
	}
	rl := &s.reqLog
	slow := c != nil && c.plan != "" && rl.slow > 0 && took >= rl.slow
	level, msg := slog.LevelInfo, "request"
	switch {
	case status >= 500:
		level = slog.LevelError
	case slow:
		level, msg = slog.LevelWarn, "slow query"
	case status < 400 && !rl.sampled():
		return
	}
	if !s.log.Enabled(ctx, level) {
		return
	}
	line := &requestLine{method: logMethod(method), family: family, status: status, took: took}
	if fromClient {
		line.sentID = string(idBytes)
	} else {
		copy(line.id[:], idBytes)
	}
	if c != nil {
		line.path = c.path // the same string, already made
	}
	if line.path == "" {
		line.path = string(ctx.Path())
	}
	// A client chose these bytes: a token it put in the URL, or garbage.
	line.path = logPath(line.path)
	line.code, line.hasCode = ctx.UserValue(codeKey).(int)
	if c != nil && c.plan != "" {
		line.plan, line.examined = c.plan, c.examined
		if slow {
			line.slow, line.explain = true, c.found.PlanSummary()
		}
	}
	// A line is not a request's failure: errors writing it are dropped.
	if k, ok := s.log.Handler().(logring.LineKeeper); ok {
		// The /scriptlog ring keeps the line as it is; a record is made
		// only for a handler that prints it.
		if next := k.KeepLine(ctx, now, level, msg, line); next != nil {
			_ = next.Handle(ctx, line.record(now, level, msg))
		}
		return
	}
	_ = s.log.Handler().Handle(ctx, line.record(now, level, msg))
}

// requestLine is a request's log line: id, method, path, family, status,
// ms, then code when the reply carries one, plan and examined for a query
// and explain for a slow one. It is made once per logged request (one
// allocation, an id the server made inline) and kept as it is by the
// /scriptlog ring.
type requestLine struct {
	id             [2 * requestIDBytes]byte // the id made for the request, unless sentID
	sentID         string                   // the client's X-Request-Id
	method, family string
	path           string
	status         int
	took           time.Duration
	code           int
	hasCode        bool
	plan           string
	examined       int
	slow           bool
	explain        string
}

func (l *requestLine) Attrs(yield func(slog.Attr)) {
	id := l.sentID
	if id == "" {
		id = string(l.id[:])
	}
	yield(slog.String("id", id))
	yield(slog.String("method", l.method))
	yield(slog.String("path", l.path))
	yield(slog.String("family", l.family))
	yield(slog.Int("status", l.status))
	yield(slog.Float64("ms", float64(l.took.Microseconds())/1000))
	if l.hasCode {
		yield(slog.Int("code", l.code))
	}
	if l.plan != "" {
		yield(slog.String("plan", l.plan))
		yield(slog.Int("examined", l.examined))
		if l.slow {
			yield(slog.String("explain", l.explain))
		}
	}
}

// record is the line as a slog.Record, made here rather than by
// Logger.LogAttrs: that would read the clock again and walk the stack for
// a source position no handler of Quarry's asks for (none sets AddSource).
func (l *requestLine) record(t time.Time, level slog.Level, msg string) slog.Record {
	rec := slog.NewRecord(t, level, msg, 0)
	l.Attrs(func(a slog.Attr) { rec.AddAttrs(a) })
	return rec
}

// sampled reports whether this successful request is logged.
func (rl *requestLog) sampled() bool {
	switch {
	case rl.sample >= 1:
		return true
	case rl.sample <= 0:
		return false
	}
	n := rl.seen.Add(1)
	return uint64(float64(n)*rl.sample) != uint64(float64(n-1)*rl.sample)
}

// requestID is the client's X-Request-Id, sent, when it is short and
// plain, or a new random one appended to dst. The id only ties a reply to
// its log line, it guards nothing: the runtime's generator (ChaCha8,
// seeded by the system) makes it without crypto/rand's system call.
func requestID(sent, dst []byte) (id []byte, fromClient bool) {
	if len(sent) > 0 && len(sent) <= maxRequestIDLen && plainID(sent) {
		return sent, true
	}
	var b [requestIDBytes]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	return hex.AppendEncode(dst, b[:]), false
}

// requestIDBytes is the size of a request id the server assigns (random
// bytes, sent in hex).
const requestIDBytes = 12

// methodName is the request's method as a string, with no allocation for
// the usual ones.
func methodName(m []byte) string {
	for _, name := range [...]string{"GET", "POST", "PUT", "DELETE", "OPTIONS", "HEAD", "PATCH"} {
		if string(m) == name {
			return name
		}
	}
	return string(m)
}

func plainID(id []byte) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:", c) >= 0) {
			return false
		}
	}
	return true
}

// family names a request's route family for metrics: the first path
// segment below the mount path when a route starts with it ("classes",
// "users", "login", …), "health" or "metrics", else "other" — so that
// arbitrary paths cannot create series without bound.
func (s *Server) family(path []byte) string {
	rel, ok := bytes.CutPrefix(path, []byte(s.opts.MountPath))
	if !ok || len(rel) == 0 || rel[0] != '/' {
		switch string(path) {
		case "/health":
			return "health"
		case "/metrics":
			return "metrics"
		}
		if s.opts.GraphQL != nil && string(path) == s.opts.GraphQLPath {
			return "graphql"
		}
		return "other"
	}
	first, _, _ := bytes.Cut(rel[1:], []byte("/"))
	if f, ok := s.families[string(first)]; ok {
		return f
	}
	return "other"
}
