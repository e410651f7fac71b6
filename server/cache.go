package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/quarrydata/quarry/cache"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/live"
	"github.com/quarrydata/quarry/service"
)

// sharedCache is the cacheAdapter of one process. A REST server
// invalidates it when it writes sessions, roles and class schemas; a
// LiveQuery server (standalone, or in a REST server) drops what it holds
// in memory when any process says so. A nil *sharedCache is no cache.
type sharedCache struct {
	c   *cache.Cache
	log *slog.Logger
}

// openCache connects to the cacheAdapter's Redis when one is configured.
func openCache(opts *config.Options, appID string, log *slog.Logger) (*sharedCache, error) {
	ca := opts.CacheAdapter
	if ca.URL == "" {
		return nil, nil
	}
	prefix := ca.Prefix
	if prefix == "" {
		prefix = "quarry:cache:" + appID + ":"
	}
	c, err := cache.Open(cache.Options{URL: ca.URL, Prefix: prefix, TTL: time.Duration(ca.TTL) * time.Millisecond, Logger: log})
	if err != nil {
		return nil, err
	}
	return &sharedCache{c: c, log: log}, nil
}

func (s *sharedCache) cache() *cache.Cache {
	if s == nil {
		return nil
	}
	return s.c
}

// cacheBatchTimeout bounds one batch's round trip to Redis.
const cacheBatchTimeout = 2 * time.Second

// consumer is the cacheAdapter's change consumer (service.ChangeConsumer):
// its ring only takes session updates and deletes (a logout, a
// revocation, a changed expiry) and role writes, and its goroutine
// invalidates a whole batch of them in Redis in one round trip, shortly
// after the writes are answered. A new session needs nothing: no lookup
// can have cached it. nil without a cacheAdapter.
func (s *sharedCache) consumer() *service.ChangeConsumer {
	if s == nil {
		return nil
	}
	return &service.ChangeConsumer{Name: "cacheAdapter",
		Wants: func(ch service.Change) bool {
			return ch.Class == "_Role" || ch.Class == "_Session" && ch.Original != nil
		},
		Deliver: func(batch []service.Change) { s.invalidate(written(batch), "") },
		Lost: func(classes []string, count int) {
			// Which sessions were written is lost with the changes: every
			// process drops every session and role lookup from memory;
			// the tokens' entries in Redis stay until they expire.
			s.invalidate(cache.Written{Roles: true}, fmt.Sprintf("%d changes of %v were never invalidated; "+
				"every process drops its lookups, but a revoked session's entry may serve until it expires (cacheAdapter ttl)", count, classes))
		}}
}

// written gathers what a batch of session and role changes invalidates.
func written(batch []service.Change) cache.Written {
	var w cache.Written
	for _, ch := range batch {
		switch ch.Class {
		case "_Role":
			w.Roles = true
		case "_Session":
			var tokens []string
			userID := ""
			for _, obj := range []map[string]any{ch.Original, ch.Object} {
				if t, _ := obj["sessionToken"].(string); t != "" {
					tokens = append(tokens, t)
				}
				if u, _ := obj["user"].(map[string]any); u != nil && userID == "" {
					userID, _ = u["objectId"].(string)
				}
			}
			if w.Sessions == nil {
				w.Sessions = map[string][]string{}
			}
			w.Sessions[userID] = append(w.Sessions[userID], tokens...)
		}
	}
	return w
}

// invalidate sends one batch; a failure (or a loss, told by lost) is
// logged: the writes stand, and other processes may use the old lookups
// until their entries expire.
func (s *sharedCache) invalidate(w cache.Written, lost string) {
	ctx, cancel := context.WithTimeout(context.Background(), cacheBatchTimeout)
	defer cancel()
	err := s.c.Invalidate(ctx, w)
	switch {
	case lost != "":
		s.log.Error("cacheAdapter: invalidations fell behind: "+lost, "err", err)
	case err != nil:
		s.log.Error("cacheAdapter: cannot invalidate; other processes may use the old session and role lookups until they expire", "err", err)
	}
}

// schemaChanged is called when this process changed class schemas,
// before the change is answered: their cached field types are invalidated
// in Redis, and every LiveQuery server drops its copy. A nil receiver
// (no cacheAdapter) does nothing.
func (s *sharedCache) schemaChanged(classes []string) {
	if s == nil {
		return
	}
	if err := s.c.SchemaChanged(context.Background(), classes...); err != nil {
		// The change stands; LiveQuery servers may use the old field types
		// until their entries expire (one minute).
		s.log.Error("cacheAdapter: cannot invalidate; LiveQuery servers may use the old schema until it expires", "classes", classes, "err", err)
	}
}

// forgetInto makes every process's invalidations drop srv's cached
// sessions and class schemas.
func (s *sharedCache) forgetInto(srv *live.Server) error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.c.Subscribe(ctx, func(inv cache.Invalidation) {
		switch {
		case inv.AllRoles:
			srv.ForgetSessions("")
		case inv.UserID != "":
			srv.ForgetSessions(inv.UserID)
		}
		switch {
		case inv.AllSchemas:
			srv.ForgetSchema("")
		default:
			for _, class := range inv.Classes {
				srv.ForgetSchema(class)
			}
		}
	})
}

func (s *sharedCache) close() {
	if s != nil {
		s.c.Close()
	}
}
