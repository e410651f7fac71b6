package live

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Identity is who a session token belongs to.
type Identity struct {
	UserID string
	// Roles are the user's role names ("role:Admin"), inherited ones
	// included.
	Roles []string
	// Expires is when the session ends; zero means never.
	Expires time.Time
}

// Authority answers the questions visibility needs. ServiceAuthority asks
// the in-process service; RemoteAuthority asks a REST server over HTTP.
type Authority interface {
	// Authenticate resolves a session token. A *schema.Error with code 209
	// means the token is not valid (unknown, revoked or expired); other
	// errors are failures to find out.
	Authenticate(ctx context.Context, token string) (Identity, error)
	// ReadFilter returns what id may read of class for op
	// (service.ReadFind or service.ReadGet). clp is the class-level
	// permissions published with the change, nil when unknown; an
	// authority with the schema at hand may use its own. An error means the
	// CLP refuses the caller.
	ReadFilter(id Identity, class, op string, clp map[string]any) (service.ReadFilter, error)
	// FieldType reports the locked type of a field, when known.
	FieldType(class, field string) (schema.Type, bool)
}

// ServiceAuthority answers from the in-process service: its sessions, its
// roles (current at each call) and its class schemas.
func ServiceAuthority(svc *service.Service) Authority { return serviceAuthority{svc} }

type serviceAuthority struct{ svc *service.Service }

func (a serviceAuthority) Authenticate(_ context.Context, token string) (Identity, error) {
	auth, expires, err := a.svc.SessionIdentity(token)
	if err != nil {
		return Identity{}, err
	}
	return Identity{UserID: auth.UserID, Roles: auth.Roles, Expires: expires}, nil
}

func (a serviceAuthority) ReadFilter(id Identity, class, op string, _ map[string]any) (service.ReadFilter, error) {
	// The local schema is the published one: instances share the data.
	return a.svc.ReadFilter(service.Auth{UserID: id.UserID, Roles: id.Roles}, class, op)
}

func (a serviceAuthority) FieldType(class, field string) (schema.Type, bool) {
	if c := a.svc.Class(class); c != nil {
		if f, ok := c.Fields[field]; ok {
			return f.Type, true
		}
	}
	return "", false
}

// MaxCachedSessions bounds the session cache; past it, arbitrary entries
// are evicted.
const MaxCachedSessions = 100_000

// lookupFailureTTL is how long a failure to resolve a session (the
// authority could not answer, as when a standalone server's REST server is
// down) is remembered: events for the session are skipped meanwhile
// instead of asking again for every event and subscriber.
const lookupFailureTTL = 2 * time.Second

// sessions caches Authenticate for cacheTimeout (the option of that name).
// Writes to _Session and _Role drop entries (ForgetUser, ForgetAll), and a
// session's own expiry is checked at every use, so a revoked or expired
// session stops receiving and a new role applies without reconnecting.
// Concurrent misses of one token share one lookup (singleflight).
type sessions struct {
	auth Authority
	ttl  time.Duration
	now  func() time.Time

	flight singleflight.Group

	mu      sync.Mutex
	entries map[string]*sessionEntry
	byUser  map[string]map[string]bool
	// generation counts forgets: a lookup that started before a forget
	// must not store what it found (it may predate a role change).
	generation uint64
}

type sessionEntry struct {
	id      Identity
	err     error // a 209 (invalid tokens are remembered) or a failure to find out
	fetched time.Time
	ttl     time.Duration
}

func newSessions(auth Authority, ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{auth: auth, ttl: ttl, now: now, entries: map[string]*sessionEntry{}, byUser: map[string]map[string]bool{}}
}

var errSessionExpired = schema.Errorf(schema.CodeInvalidSessionToken, "Session token is expired.")

// missing returns the tokens whose answers the cache lacks or holds stale,
// under one lock for them all. A token may come back twice (singleflight
// and the cache make the second lookup cheap); with everything cached,
// nothing is allocated.
func (s *sessions) missing(tokens iter.Seq[string]) []string {
	now := s.now()
	var out []string
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range tokens {
		if e := s.entries[t]; e == nil || now.Sub(e.fetched) >= e.ttl {
			out = append(out, t)
		}
	}
	return out
}

// get resolves token through the cache.
func (s *sessions) get(ctx context.Context, token string) (Identity, error) {
	now := s.now()
	s.mu.Lock()
	e := s.entries[token]
	if e != nil && now.Sub(e.fetched) >= e.ttl {
		s.dropLocked(token, e)
		e = nil
	}
	gen := s.generation
	s.mu.Unlock()
	if e == nil {
		// Keyed by generation too: a caller that comes after a forget
		// never shares a lookup that began before it.
		key := strconv.FormatUint(gen, 10) + "\x00" + token
		v, _, _ := s.flight.Do(key, func() (any, error) { return s.lookup(ctx, token, gen), nil })
		e = v.(*sessionEntry)
	}
	if e.err != nil {
		return Identity{}, e.err
	}
	if !e.id.Expires.IsZero() && !now.Before(e.id.Expires) {
		return Identity{}, errSessionExpired
	}
	return e.id, nil
}

// lookup asks the authority and caches the answer: an identity or a 209
// for the cache timeout, a failure to find out for lookupFailureTTL.
func (s *sessions) lookup(ctx context.Context, token string, gen uint64) *sessionEntry {
	id, err := s.auth.Authenticate(ctx, token)
	e := &sessionEntry{id: id, err: err, fetched: s.now(), ttl: s.ttl}
	var pe *schema.Error
	if err != nil && !(errors.As(err, &pe) && pe.Code == schema.CodeInvalidSessionToken) {
		e.ttl = min(lookupFailureTTL, s.ttl)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.generation {
		return e // forgotten meanwhile: answer this lookup, remember nothing
	}
	if old := s.entries[token]; old != nil {
		s.dropLocked(token, old)
	}
	if len(s.entries) >= MaxCachedSessions {
		for t, old := range s.entries {
			s.dropLocked(t, old)
			break
		}
	}
	s.entries[token] = e
	if id.UserID != "" {
		if s.byUser[id.UserID] == nil {
			s.byUser[id.UserID] = map[string]bool{}
		}
		s.byUser[id.UserID][token] = true
	}
	return e
}

func (s *sessions) dropLocked(token string, e *sessionEntry) {
	delete(s.entries, token)
	if toks := s.byUser[e.id.UserID]; toks != nil {
		delete(toks, token)
		if len(toks) == 0 {
			delete(s.byUser, e.id.UserID)
		}
	}
}

// forgetUser drops the cached sessions of one user ("" drops all).
func (s *sessions) forgetUser(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.generation++
	if userID == "" {
		s.entries = map[string]*sessionEntry{}
		s.byUser = map[string]map[string]bool{}
		return
	}
	for token := range s.byUser[userID] {
		delete(s.entries, token)
	}
	delete(s.byUser, userID)
	// Remembered invalid tokens have no user; they stay invalid.
}
