package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/cache"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// RemoteOptions configure RemoteAuthority.
type RemoteOptions struct {
	ServerURL string // the REST server, mount path included
	AppID     string
	MasterKey string
	Client    *http.Client // nil: a client with a 10 s timeout
	// SchemaTTL is how long a class's field types are kept (1 minute),
	// unless a schema change announced through Cache drops them sooner.
	SchemaTTL time.Duration
	// Logger receives failures to reach the REST server (nil: none).
	Logger *slog.Logger
	// Cache is the shared cache (cacheAdapter), asked before the REST
	// server and given its answers for the other processes (nil: none).
	Cache *cache.Cache
}

// Limits of RemoteAuthority's role walk (as the service's).
const (
	remoteMaxRoles   = service.MaxRolesPerUser
	remoteRolesPage  = 1000
	remoteRolesDepth = 64
)

// RemoteAuthority answers from a REST server over HTTP, for a standalone
// LiveQuery server (`quarry livequery`): GET /sessions/me with the token,
// the user's roles through GET /roles with the master key (inherited ones
// included), field types through GET /schemas/<class>. Class-level
// permissions come with each change.
func RemoteAuthority(opts RemoteOptions) Authority {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.SchemaTTL <= 0 {
		opts.SchemaTTL = time.Minute
	}
	opts.ServerURL = strings.TrimRight(opts.ServerURL, "/")
	return &remoteAuthority{opts: opts, schemas: map[string]remoteSchema{}, policies: map[string]remotePolicy{}}
}

type remoteAuthority struct {
	opts     RemoteOptions
	mu       sync.Mutex
	schemas  map[string]remoteSchema
	policies map[string]remotePolicy // class -> the policy of its last CLP
	// schemaForgets counts ForgetSchema calls: a lookup that began before
	// one must not keep what it found (it may predate the change).
	schemaForgets uint64
	lastErr       atomic.Int64 // unix nanos of the last logged failure
}

// remotePolicy is a class's access policy compiled from the CLP a change
// carried. The CLP is kept: while it is held its map cannot be reused for
// another, so its identity stands for its content.
type remotePolicy struct {
	clp    map[string]any
	policy *access.Policy
}

// lookupFailed logs a failure to ask the REST server, at most once every
// ten seconds.
func (a *remoteAuthority) lookupFailed(what string, err error) {
	now := time.Now().UnixNano()
	if last := a.lastErr.Load(); now-last > int64(10*time.Second) && a.lastErr.CompareAndSwap(last, now) && a.opts.Logger != nil {
		a.opts.Logger.Warn("livequery: cannot ask the REST server; will ask again", "what", what, "err", err)
	}
}

type remoteSchema struct {
	fields  map[string]schema.Type
	fetched time.Time
}

// get calls the REST server and decodes the JSON reply into out; a Parse
// error reply comes back as a *schema.Error. It asks with token, or with
// the master key when token is "".
func (a *remoteAuthority) get(ctx context.Context, path string, query url.Values, token string, out any) error {
	return a.getAs(ctx, path, query, token, token == "", out)
}

// getAs is get with the caller spelled out: the session token when not
// "", else the master key when master, else the application id alone (a
// public caller).
func (a *remoteAuthority) getAs(ctx context.Context, path string, query url.Values, token string, master bool, out any) error {
	u := a.opts.ServerURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Parse-Application-Id", a.opts.AppID)
	if token != "" {
		req.Header.Set("X-Parse-Session-Token", token)
	} else if master {
		req.Header.Set("X-Parse-Master-Key", a.opts.MasterKey)
	}
	resp, err := a.opts.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var pe struct {
			Code  int    `json:"code"`
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &pe) == nil && pe.Code != 0 {
			return schema.Errorf(pe.Code, "%s", pe.Error)
		}
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return json.Unmarshal(body, out)
}

func (a *remoteAuthority) Authenticate(ctx context.Context, token string) (Identity, error) {
	id, err := a.session(ctx, token)
	if err != nil {
		return Identity{}, err
	}
	if id.Roles, err = a.userRoles(ctx, id.UserID); err != nil {
		return Identity{}, err
	}
	return id, nil
}

// askSession resolves a session token with the REST server.
func (a *remoteAuthority) askSession(ctx context.Context, token string) (Identity, error) {
	var sess struct {
		User struct {
			ObjectID string `json:"objectId"`
		} `json:"user"`
		ExpiresAt struct {
			ISO string `json:"iso"`
		} `json:"expiresAt"`
	}
	if err := a.get(ctx, "/sessions/me", nil, token, &sess); err != nil {
		return Identity{}, err
	}
	if sess.User.ObjectID == "" {
		return Identity{}, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	id := Identity{UserID: sess.User.ObjectID}
	if sess.ExpiresAt.ISO != "" {
		if t, err := time.Parse(schema.TimeLayout, sess.ExpiresAt.ISO); err == nil {
			if !time.Now().Before(t) {
				return Identity{}, errSessionExpired
			}
			id.Expires = t
		}
	}
	return id, nil
}

// roles walks the role graph as the service does: the roles whose users
// hold the user, then every role whose roles relation holds one of those.
func (a *remoteAuthority) roles(ctx context.Context, userID string) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	frontier := []any{schema.Pointer("_User", userID)}
	key := "users"
	for depth := 0; len(frontier) > 0 && depth < remoteRolesDepth && len(seen) < remoteMaxRoles; depth++ {
		where, _ := json.Marshal(map[string]any{key: map[string]any{"$in": frontier}})
		var page struct {
			Results []struct {
				ObjectID string `json:"objectId"`
				Name     string `json:"name"`
			} `json:"results"`
		}
		q := url.Values{"where": {string(where)}, "keys": {"name"}, "limit": {fmt.Sprint(remoteRolesPage)}}
		if err := a.get(ctx, "/roles", q, "", &page); err != nil {
			return nil, fmt.Errorf("roles of %s: %w", userID, err)
		}
		frontier = nil
		for _, r := range page.Results {
			if seen[r.ObjectID] {
				continue
			}
			seen[r.ObjectID] = true
			names = append(names, "role:"+r.Name)
			frontier = append(frontier, schema.Pointer("_Role", r.ObjectID))
		}
		key = "roles"
	}
	return names, nil
}

func (a *remoteAuthority) ReadFilter(id Identity, class, op string, clp map[string]any) (service.ReadFilter, error) {
	r, err := a.policy(class, clp).Read(access.Caller{UserID: id.UserID, Roles: id.Roles}, access.Op(op))
	if err != nil {
		return service.ReadFilter{}, err
	}
	return r.Filter(), nil
}

// policy returns the class's access policy for clp, compiled once per
// CLP: every subscriber of one change gets the same map, and a later
// change with an equal CLP reuses the compiled policy too. Field types are
// not consulted (they would cost a request to the REST server).
func (a *remoteAuthority) policy(class string, clp map[string]any) *access.Policy {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.policies[class]
	if ok && sameMap(e.clp, clp) {
		return e.policy
	}
	if ok && reflect.DeepEqual(e.clp, clp) {
		// An equal CLP from a later change: keep the policy, hold the new map.
		a.policies[class] = remotePolicy{clp, e.policy}
		return e.policy
	}
	p := access.Compile(class, clp, nil)
	a.policies[class] = remotePolicy{clp, p}
	return p
}

func sameMap(x, y map[string]any) bool {
	return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
}

func (a *remoteAuthority) FieldType(class, field string) (schema.Type, bool) {
	a.mu.Lock()
	sc, ok := a.schemas[class]
	a.mu.Unlock()
	if !ok || time.Since(sc.fetched) > a.opts.SchemaTTL {
		a.mu.Lock()
		forgets := a.schemaForgets
		a.mu.Unlock()
		sc = remoteSchema{fields: map[string]schema.Type{}, fetched: time.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		fields, fetched, err := a.fields(ctx, class)
		cancel()
		var pe *schema.Error
		switch {
		case err == nil:
			// From the cache: as old as its first read, not younger.
			sc.fields, sc.fetched = fields, fetched
		case errors.As(err, &pe) && pe.Code == schema.CodeInvalidClassName:
			// The class does not exist yet: no fields, remembered.
		default:
			// A failure to find out is not remembered as "no fields": the
			// next lookup asks again (meanwhile the old answer, if any).
			a.lookupFailed("schema of "+class, err)
			a.mu.Lock()
			old, had := a.schemas[class]
			a.mu.Unlock()
			if !had {
				return "", false
			}
			t, ok := old.fields[field]
			return t, ok
		}
		a.mu.Lock()
		if forgets == a.schemaForgets {
			a.schemas[class] = sc
		}
		a.mu.Unlock()
	}
	t, ok := sc.fields[field]
	return t, ok
}

// ForgetSchema drops the field types held for class ("": every class), so
// the next lookup asks the cacheAdapter or a REST server: sent when a
// REST server announces a schema change.
func (a *remoteAuthority) ForgetSchema(class string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.schemaForgets++
	if class == "" {
		clear(a.schemas)
		return
	}
	delete(a.schemas, class)
}

// JoinFind runs a live join's find on the REST server (JoinSource), as the
// subscriber (their session token) or with the master key: a standalone
// LiveQuery server takes live joins too, each look-up a request.
func (a *remoteAuthority) JoinFind(_ Identity, token string, master bool, class string, where map[string]any, limit int) ([]schema.Object, error) {
	w, err := json.Marshal(where)
	if err != nil {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "where is not JSON")
	}
	var page struct {
		Results []schema.Object `json:"results"`
	}
	q := url.Values{"where": {string(w)}, "limit": {fmt.Sprint(limit)}}
	if master {
		token = ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.Client.Timeout)
	defer cancel()
	if err := a.getAs(ctx, "/classes/"+url.PathEscape(class), q, token, master, &page); err != nil {
		if _, ok := err.(*schema.Error); !ok {
			a.lookupFailed("live join find", err)
		}
		return nil, err
	}
	for _, o := range page.Results {
		o["className"] = class
		o["__type"] = "Object"
	}
	return page.Results, nil
}

// JoinRelated lists a relation's members through the REST server
// (JoinSource): a find of targetClass with $relatedTo, so only members
// that exist as objects of targetClass are listed.
func (a *remoteAuthority) JoinRelated(owningClass, key, owningID, targetClass string, fn func(string) bool) {
	where := map[string]any{"$relatedTo": map[string]any{"object": schema.Pointer(owningClass, owningID), "key": key}}
	w, _ := json.Marshal(where)
	var page struct {
		Results []struct {
			ObjectID string `json:"objectId"`
		} `json:"results"`
	}
	q := url.Values{"where": {string(w)}, "keys": {"objectId"}, "order": {"objectId"}, "limit": {fmt.Sprint(MaxJoinInner + 1)}}
	ctx, cancel := context.WithTimeout(context.Background(), a.opts.Client.Timeout)
	defer cancel()
	if err := a.getAs(ctx, "/classes/"+url.PathEscape(targetClass), q, "", true, &page); err != nil {
		a.lookupFailed("live join relation", err)
		return
	}
	for _, r := range page.Results {
		if !fn(r.ObjectID) {
			return
		}
	}
}
