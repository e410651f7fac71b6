package live

import (
	"context"
	"net/url"
	"time"

	"github.com/quarrydata/quarry/cache"
	"github.com/quarrydata/quarry/schema"
)

// The lookups of remoteAuthority, through the shared cache when it has
// one: a hit saves the REST server a request (a role walk is several); a
// miss asks the REST server and shares the answer. The cache failing is a
// miss, logged like a failure to reach the REST server.

// session resolves a session token.
func (a *remoteAuthority) session(ctx context.Context, token string) (Identity, error) {
	c := a.opts.Cache
	if c == nil {
		return a.askSession(ctx, token)
	}
	s, ok, err := c.Session(ctx, token)
	if err != nil {
		a.lookupFailed("the cacheAdapter's session entry", err)
	}
	if ok {
		return Identity{UserID: s.UserID, Expires: s.Expires}, nil
	}
	id, err := a.askSession(ctx, token)
	if err != nil {
		return Identity{}, err
	}
	if err := c.PutSession(ctx, token, cache.Session{UserID: id.UserID, Expires: id.Expires}); err != nil {
		a.lookupFailed("storing a session in the cacheAdapter", err)
	}
	return id, nil
}

// userRoles returns a user's role names, inherited ones included.
func (a *remoteAuthority) userRoles(ctx context.Context, userID string) ([]string, error) {
	c := a.opts.Cache
	if c == nil {
		return a.roles(ctx, userID)
	}
	roles, gen, ok, err := c.Roles(ctx, userID)
	if err != nil {
		a.lookupFailed("the cacheAdapter's role entry", err)
	}
	if ok {
		return roles, nil
	}
	roles, err2 := a.roles(ctx, userID)
	if err2 != nil {
		return nil, err2
	}
	if err == nil {
		// Stored under the generation seen before asking: an answer that
		// straddles a role change is never read (cache.RolesGen).
		if err := c.PutRoles(ctx, userID, gen, roles); err != nil {
			a.lookupFailed("storing roles in the cacheAdapter", err)
		}
	}
	return roles, nil
}

// fields returns a class's field types and when they were read from a
// REST server; a class that does not exist is a *schema.Error with code 103.
func (a *remoteAuthority) fields(ctx context.Context, class string) (map[string]schema.Type, time.Time, error) {
	c := a.opts.Cache
	var gen cache.SchemaGen
	var genErr error
	if c != nil {
		var cached cache.SchemaEntry
		var ok bool
		cached, gen, ok, genErr = c.Schema(ctx, class)
		if genErr != nil {
			a.lookupFailed("the cacheAdapter's schema entry", genErr)
		}
		if ok {
			out := make(map[string]schema.Type, len(cached.Fields))
			for k, t := range cached.Fields {
				out[k] = schema.Type(t)
			}
			return out, cached.Fetched, nil
		}
	}
	fetched := time.Now()
	var reply struct {
		Fields map[string]struct {
			Type schema.Type `json:"type"`
		} `json:"fields"`
	}
	if err := a.get(ctx, "/schemas/"+url.PathEscape(class), nil, "", &reply); err != nil {
		return nil, fetched, err
	}
	out := make(map[string]schema.Type, len(reply.Fields))
	shared := make(map[string]string, len(reply.Fields))
	for k, f := range reply.Fields {
		out[k] = f.Type
		shared[k] = string(f.Type)
	}
	if c != nil && genErr == nil {
		// Stored under the generation seen before asking: an answer that
		// straddles a schema change is never read (cache.SchemaGen).
		if err := c.PutSchema(ctx, class, gen, shared, fetched); err != nil {
			a.lookupFailed("storing a schema in the cacheAdapter", err)
		}
	}
	return out, fetched, nil
}
