// Package ratelimit counts requests per client address in fixed time
// windows and refuses those over a rule's count (the rateLimit option and
// cloud validators' rateLimit). Counters live in memory or, for several
// instances, in Redis. It knows rules and counters only: no HTTP, no
// service; transport and cloud call it, it imports only schema.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quarrydata/quarry/schema"
)

// DefaultMessage is the body message of a refusal without its own.
const DefaultMessage = "Too many requests."

// Code is the Parse error code of a refusal (sent with HTTP 429), the code
// Parse Server gives it.
const Code = schema.CodeConnectionFailed

// StoreTimeout bounds one counter update in Redis; past it the request is
// let through (see Limiter.Check).
const StoreTimeout = 500 * time.Millisecond

// Rule is one rateLimit entry.
type Rule struct {
	// Path is requestPath, below the mount path: "*" matches any run of
	// characters (slashes too), ":name" one path segment; "*" alone is
	// every path.
	Path string
	// Paths are more paths counted under the same counters (a cloud
	// trigger's limit covers /classes/C and /classes/C/*).
	Paths []string
	// Methods are requestMethods (upper case); empty limits every method.
	Methods []string
	// Window is requestTimeWindow; Count is requestCount, the requests
	// one address may make per window.
	Window time.Duration
	Count  int
	// Message is errorResponseMessage ("" is DefaultMessage).
	Message string
	// IncludeInternal also counts requests made by cloud code.
	IncludeInternal bool
	// IncludeMaster also counts master-key requests.
	IncludeMaster bool
	// RedisURL keeps this rule's counters in Redis, shared by every
	// instance that uses the same URL; "" keeps them in memory.
	RedisURL string
}

// Request is what a rule is matched against: the REST operation a request
// performs, whichever front end carries it (a GraphQL mutation or cloud
// code's SDK call gives the method and path of its REST twin).
type Request struct {
	Method string // upper case, after any _method override
	Path   string // below the mount path, starting with "/"
	IP     string // the client's address: the counters' key
	Master bool
	// Internal marks requests made by cloud code.
	Internal bool
}

// Error is a refusal: errors.As finds it to answer HTTP 429; it wraps the
// *schema.Error (Code, the rule's message) a client gets.
type Error struct{ parse *schema.Error }

func (e *Error) Error() string { return e.parse.Error() }

// Unwrap gives the Parse error.
func (e *Error) Unwrap() error { return e.parse }

// Options configure a Limiter.
type Options struct {
	// Prefix starts every Redis key ("" is "quarry:ratelimit:").
	Prefix string
	// Now is the clock of in-memory counters (nil: time.Now).
	Now func() time.Time
	// Logger receives Redis failures.
	Logger *slog.Logger
}

// Limiter checks requests against its rules. It is safe for concurrent use.
type Limiter struct {
	opts   Options
	mu     sync.RWMutex
	rules  []*rule
	mem    *memory
	redis  map[string]*redisStore // by URL
	warned sync.Map               // URLs whose failure was logged
}

type rule struct {
	Rule
	re  *regexp.Regexp // nil: every path
	key string         // names the rule's counters
}

// errBadRule marks a rule that cannot be compiled.
var errBadRule = errors.New("ratelimit: invalid rule")

// New compiles rules; a rule with a Redis URL connects to it.
func New(rules []Rule, opts Options) (*Limiter, error) {
	if opts.Prefix == "" {
		opts.Prefix = "quarry:ratelimit:"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{opts: opts, mem: newMemory(opts.Now), redis: map[string]*redisStore{}}
	for _, r := range rules {
		if err := l.Add(r); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Add compiles one more rule (a cloud validator's).
func (l *Limiter) Add(r Rule) error {
	if r.Path == "" {
		return fmt.Errorf("%w: requestPath is missing", errBadRule)
	}
	if r.Window <= 0 {
		return fmt.Errorf("%w: requestTimeWindow of %s must be positive", errBadRule, r.Path)
	}
	if r.Count <= 0 {
		return fmt.Errorf("%w: requestCount of %s must be positive", errBadRule, r.Path)
	}
	if r.Message == "" {
		r.Message = DefaultMessage
	}
	r.Methods = slices.Clone(r.Methods)
	for i, m := range r.Methods {
		r.Methods[i] = strings.ToUpper(m)
	}
	c := &rule{Rule: r}
	all := append([]string{r.Path}, r.Paths...)
	if !slices.Contains(all, "*") {
		re, err := compilePaths(all)
		if err != nil {
			return fmt.Errorf("%w: requestPath %q: %v", errBadRule, r.Path, err)
		}
		c.re = re
	}
	c.key = fmt.Sprintf("%s|%s|%d|%d", strings.Join(all, "+"), strings.Join(r.Methods, ","), r.Window.Milliseconds(), r.Count)
	if r.RedisURL != "" {
		l.mu.Lock()
		_, ok := l.redis[r.RedisURL]
		l.mu.Unlock()
		if !ok {
			st, err := openRedis(r.RedisURL)
			if err != nil {
				return err
			}
			l.mu.Lock()
			l.redis[r.RedisURL] = st
			l.mu.Unlock()
		}
	}
	l.mu.Lock()
	l.rules = append(l.rules, c)
	l.mu.Unlock()
	return nil
}

// compilePaths turns requestPaths into one anchored regular expression.
func compilePaths(paths []string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^(?:")
	for n, p := range paths {
		if n > 0 {
			b.WriteString("|")
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		for i := 0; i < len(p); i++ {
			switch ch := p[i]; {
			case ch == '*':
				b.WriteString(".*")
			case ch == ':' && p[i-1] == '/':
				for i+1 < len(p) && p[i+1] != '/' {
					i++
				}
				b.WriteString("[^/]+")
			default:
				b.WriteString(regexp.QuoteMeta(string(ch)))
			}
		}
	}
	b.WriteString(")/?$")
	return regexp.Compile(b.String())
}

// Empty reports whether there are no rules (a nil Limiter has none).
func (l *Limiter) Empty() bool {
	if l == nil {
		return true
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.rules) == 0
}

// matches reports whether the rule covers q's operation under any of
// the routes that perform it (see forms).
func (r *rule) matches(q Request, forms []operation) bool {
	if q.Master && !r.IncludeMaster || q.Internal && !r.IncludeInternal {
		return false
	}
	for _, f := range forms {
		if len(r.Methods) > 0 && !slices.Contains(r.Methods, f.method) {
			continue
		}
		if r.re == nil || r.re.MatchString(f.path) {
			return true
		}
	}
	return false
}

// Check counts q against every rule that covers its operation, whichever
// route carries it (GET /login is the POST /login operation; /classes/_User
// is /users), and refuses it (*Error) when one rule's count for q.IP is
// exceeded. A nil Limiter allows all.
// When Redis does not answer within StoreTimeout the request is allowed:
// an outage of the counter store must not stop the API; it is logged once
// per outage.
func (l *Limiter) Check(q Request) error {
	if l == nil {
		return nil
	}
	l.mu.RLock()
	rules := l.rules
	l.mu.RUnlock()
	var buf [maxForms]operation
	forms := q.forms(buf[:0])
	for _, r := range rules {
		if !r.matches(q, forms) {
			continue
		}
		key := r.key + "|" + q.IP
		var n int64
		if r.RedisURL == "" {
			n = l.mem.incr(key, r.Window)
		} else {
			l.mu.RLock()
			st := l.redis[r.RedisURL]
			l.mu.RUnlock()
			ctx, cancel := context.WithTimeout(context.Background(), StoreTimeout)
			var err error
			n, err = st.incr(ctx, l.opts.Prefix+key, r.Window)
			cancel()
			if err != nil {
				if _, seen := l.warned.LoadOrStore(r.RedisURL, true); !seen {
					l.opts.Logger.Warn("rateLimit: Redis does not answer; requests are let through uncounted", "err", err)
				}
				continue
			}
			l.warned.Delete(r.RedisURL)
		}
		if n > int64(r.Count) {
			return &Error{parse: &schema.Error{Code: Code, Message: r.Message}}
		}
	}
	return nil
}

// Close disconnects from Redis.
func (l *Limiter) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, st := range l.redis {
		errs = append(errs, st.client.Close())
	}
	l.redis = map[string]*redisStore{}
	return errors.Join(errs...)
}
