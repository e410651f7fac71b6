package server

import (
	"context"
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

// invalidate is called with every change this process commits, before
// the write is answered: a session updated or deleted (a logout) and any
// role write are invalidated in Redis before the client hears of it.
// A new session needs nothing: no lookup can have cached it.
func (s *sharedCache) invalidate(ch service.Change) {
	if s == nil {
		return
	}
	var err error
	switch ch.Class {
	case "_Session":
		if ch.Original == nil {
			return
		}
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
		err = s.c.SessionsWritten(context.Background(), userID, tokens...)
	case "_Role":
		err = s.c.RolesChanged(context.Background())
	default:
		return
	}
	if err != nil {
		// The write stands; other processes may use the old lookup until
		// its entry expires (cacheAdapter ttl).
		s.log.Error("cacheAdapter: cannot invalidate; other processes may use the old "+ch.Class+" lookup until it expires", "err", err)
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
