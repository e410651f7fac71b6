package service

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
)

// Authenticate turns a session token into the caller's identity: the
// session's user and every role the user holds, inherited ones included.
// Sessions and roles are read from the in-memory indexes, so a revoked
// session or a changed role membership takes effect on the next request.
func (s *Service) Authenticate(a Auth) (Auth, error) {
	if a.SessionToken == "" || a.Master {
		return a, nil
	}
	sess, ok := s.sessionByToken(a.SessionToken)
	if !ok {
		// Perhaps another instance just signed the user up or in.
		s.catchUp() // current.go
		if sess, ok = s.sessionByToken(a.SessionToken); !ok {
			return a, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
		}
	}
	if exp, ok := sess["expiresAt"].(map[string]any); ok {
		iso, _ := exp["iso"].(string)
		if iso != "" && iso < schema.FormatTime(s.opts.Now()) {
			return a, schema.Errorf(schema.CodeInvalidSessionToken, "Session token is expired.")
		}
		if s.sessionUse != nil {
			s.sessionUse(sess, iso) // extendSessionOnUse (package accounts)
		}
	}
	user, _ := sess["user"].(map[string]any)
	uid, _ := user["objectId"].(string)
	if _, ok := s.userByID(uid); !ok {
		return a, schema.Errorf(schema.CodeInvalidSessionToken, "Invalid session token")
	}
	a.UserID = uid
	a.Roles = s.rolesOf(uid)
	return a, nil
}

// sessionByToken finds a _Session through its sessionToken index.
func (s *Service) sessionByToken(token string) (schema.Object, bool) {
	return s.findOne(classSession, "sessionToken", token)
}

func (s *Service) userByID(id string) (schema.Object, bool) {
	if id == "" {
		return nil, false
	}
	c := s.data.Collection(classUser, false)
	if c == nil {
		return nil, false
	}
	return c.Get(id)
}

// findOne returns the first object whose indexed field equals value.
func (s *Service) findOne(class, field string, value any) (schema.Object, bool) {
	c := s.data.Collection(class, false)
	if c == nil {
		return nil, false
	}
	var found schema.Object
	r := pointRange(value)
	_ = c.ScanRange(field, r, false, time.Time{}, func(ref index.Ref) bool {
		found = ref.Object()
		return false
	})
	return found, found != nil
}

// roleCache remembers the role names of the users asked about last, at
// most roleCacheUsers of them (least recently used go first), so a server
// that sees many users once keeps a bounded cache. Any write to _Role
// bumps the generation and empties it, so membership changes apply at
// once.
type roleCache struct {
	mu    sync.Mutex
	gen   uint64                           // bumped by every _Role write
	users *simplelru.LRU[string, []string] // nil until the first user is kept
}

// roleCacheUsers bounds how many users' role names are cached.
const roleCacheUsers = 10_000

// rolesOf computes the names of the roles a user holds: roles whose users
// relation holds the user, then every role whose roles relation holds one
// of those (a parent role's permissions reach its child roles' users).
// Cycles end because each role is visited once.
func (s *Service) rolesOf(userID string) []string {
	s.roles.mu.Lock()
	if s.roles.users != nil {
		if names, ok := s.roles.users.Get(userID); ok {
			s.roles.mu.Unlock()
			return names
		}
	}
	gen := s.roles.gen
	s.roles.mu.Unlock()
	coll := s.data.Collection(classRole, false)
	if coll == nil {
		return nil
	}
	seen := map[string]bool{}
	var queue []string
	s.data.Owners(classRole, "users", userID, func(roleID string) bool {
		if !seen[roleID] {
			seen[roleID] = true
			queue = append(queue, roleID)
		}
		return len(seen) <= MaxRolesPerUser
	})
	for i := 0; i < len(queue) && len(seen) <= MaxRolesPerUser; i++ {
		s.data.Owners(classRole, "roles", queue[i], func(parent string) bool {
			if !seen[parent] {
				seen[parent] = true
				queue = append(queue, parent)
			}
			return len(seen) <= MaxRolesPerUser
		})
	}
	names := make([]string, 0, len(queue))
	for _, id := range queue {
		if r, ok := coll.Get(id); ok {
			if n, ok := r["name"].(string); ok {
				names = append(names, "role:"+n)
			}
		}
	}
	s.roles.mu.Lock()
	// A role write that committed while the graph was walked may not be
	// in names: such a result answers this request but is not kept.
	if s.roles.gen == gen {
		if s.roles.users == nil {
			s.roles.users, _ = simplelru.NewLRU[string, []string](roleCacheUsers, nil)
		}
		s.roles.users.Add(userID, names)
	}
	s.roles.mu.Unlock()
	return names
}

// MaxRolesPerUser bounds the role graph walked for one user.
const MaxRolesPerUser = 10_000

func (s *Service) forgetRoles() {
	s.roles.mu.Lock()
	s.roles.gen++
	if s.roles.users != nil {
		s.roles.users.Purge()
	}
	s.roles.mu.Unlock()
}
