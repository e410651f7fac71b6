package service

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/auth"
	"github.com/quarrydata/quarry/schema"
)

// Third-party sign-in: a _User's authData holds one entry per linked
// provider ({id, credential…}). A write naming authData has its entries
// checked by the provider adapters (auth) before any lock is taken, since
// that asks the provider over the network; the checked entries are then
// merged into the stored authData under the write's locks, where an id
// already linked to another user fails with 208.

// AuthPlan is a _User write's authData, checked by the providers before
// the write's locks (PlanAuthData).
type AuthPlan struct {
	set      map[string]map[string]any // provider -> entry to store
	unlink   []string                  // providers set to null
	clearAll bool                      // the master key deleted authData
	mfa      *mfaEnrolment             // authData.mfa set up
	response map[string]any            // authDataResponse of the reply
}

// respond adds a provider's part of authDataResponse.
func (p *AuthPlan) respond(provider string, v any) {
	if p.response == nil {
		p.response = map[string]any{}
	}
	p.response[provider] = v
}

// ErrAuthDataUsed is 208: an authData id already linked to another user.
var ErrAuthDataUsed = schema.Errorf(auth.CodeAccountAlreadyLinked, "this auth is already used")

// Entries are the checked provider entries to link, by provider.
func (p *AuthPlan) Entries() map[string]map[string]any { return p.set }

// Response is the plan's authDataResponse (nil: none).
func (p *AuthPlan) Response() map[string]any { return p.response }

// PlanAuthData has the providers check the entries of a sign-in (provider
// -> entry, mfa excepted), as a new user's authData; it asks them over the
// network, so it never runs under a lock.
func (s *Service) PlanAuthData(a Auth, logins map[string]any) (*AuthPlan, error) {
	return s.planAuthData(a, "", logins, nil)
}

// CreateLinkedUser creates a user from body with a checked plan's authData
// linked; ErrAuthDataUsed when another user holds one of its ids.
func (s *Service) CreateLinkedUser(a Auth, body map[string]any, plan *AuthPlan) (CreateResult, error) {
	res, err := s.write(a, []WriteOp{{Method: MethodCreate, Class: classUser, Body: body, authPlan: plan}}, true)
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return CreateResult{}, err
	}
	return res[0].Create, nil
}

// RelinkAuthData keeps a user's refreshed credentials: a checked plan's
// entries replace the stored ones, as the server.
func (s *Service) RelinkAuthData(userID string, plan *AuthPlan) error {
	keep := &AuthPlan{set: plan.set}
	_, err := s.write(InternalAuth(), []WriteOp{{Method: MethodUpdate, Class: classUser, ID: userID, Body: map[string]any{}, authPlan: keep}}, true)
	return err
}

// checkAuthData plans the authData of every _User write in ops (the ones
// SignUpWithAuthData planned already excepted).
func (s *Service) checkAuthData(a Auth, ops []WriteOp) error {
	for i := range ops {
		op := &ops[i]
		if op.Class != classUser || op.Method == MethodDelete || op.authPlan != nil {
			continue
		}
		for k := range op.Body {
			if strings.HasPrefix(k, "authData.") {
				return schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", k)
			}
		}
		raw, has := op.Body["authData"]
		if !has {
			continue
		}
		var stored map[string]any
		if op.Method == MethodUpdate {
			u, _ := s.userByID(op.ID)
			stored, _ = u["authData"].(map[string]any)
		}
		plan, err := s.planAuthData(a, op.ID, raw, stored)
		if err != nil {
			return err
		}
		op.authPlan = plan
	}
	return nil
}

// planAuthData validates a body's authData value against the stored one.
// Entries equal to the stored ones are not asked about again.
func (s *Service) planAuthData(a Auth, userID string, raw any, stored map[string]any) (*AuthPlan, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, auth.ErrUnsupported
	}
	plan := &AuthPlan{set: map[string]map[string]any{}}
	if op, isOp := m["__op"]; isOp {
		if op == "Delete" && a.Master {
			plan.clearAll = true
			return plan, nil
		}
		return nil, auth.ErrUnsupported
	}
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if m[p] == nil {
			plan.unlink = append(plan.unlink, p)
			continue
		}
		entry, ok := m[p].(map[string]any)
		if !ok {
			return nil, schema.Errorf(auth.CodeInvalidAuthData, "authData.%s must be an object.", p)
		}
		if p == auth.MFA {
			enrol, err := s.planMFA(a, userID, entry)
			if err != nil {
				return nil, err
			}
			plan.mfa = enrol
			if enrol != nil && enrol.response() != nil {
				plan.respond(auth.MFA, enrol.response())
			}
			continue
		}
		if a.Master && !a.internal {
			// The master key writes authData as given (imports, migrations).
			plan.set[p] = entry
			continue
		}
		if !s.opts.Auth.Enabled(p) {
			return nil, auth.ErrUnsupported
		}
		if old, ok := stored[p]; ok && reflect.DeepEqual(old, entry) {
			plan.set[p] = entry
			continue
		}
		res, err := s.opts.Auth.Validate(context.Background(), p, entry)
		if err != nil {
			return nil, err
		}
		plan.set[p] = entry
		if res.Store != nil {
			plan.set[p] = res.Store
		}
		if res.Response != nil {
			plan.respond(p, res.Response)
		}
	}
	return plan, nil
}

// authDataRules merges a write's planned authData into the stored one,
// under the write's locks, and turns an anonymous user who sets a password
// into a regular one.
func (s *Service) authDataRules(d *draft, plan *AuthPlan, body map[string]any) error {
	orig, _ := d.original["authData"].(map[string]any)
	_, setsPassword := body["password"]
	upgrade := setsPassword && orig[auth.Anonymous] != nil && (plan == nil || plan.set[auth.Anonymous] == nil)
	if plan == nil && !upgrade {
		return nil
	}
	merged := maps.Clone(orig)
	if merged == nil {
		merged = map[string]any{}
	}
	if upgrade {
		delete(merged, auth.Anonymous) // the anonymous user signed up
	}
	if plan != nil {
		if err := s.applyAuthPlan(d, plan, merged); err != nil {
			return err
		}
	}
	if len(merged) > 0 {
		d.obj["authData"] = merged
	} else {
		delete(d.obj, "authData")
	}
	return nil
}

// applyAuthPlan applies a checked plan to the authData being written.
func (s *Service) applyAuthPlan(d *draft, plan *AuthPlan, merged map[string]any) error {
	if plan.clearAll {
		clear(merged)
		clearMFA(d)
	}
	for _, p := range plan.unlink {
		delete(merged, p)
		if p == auth.MFA {
			clearMFA(d)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(plan.set)) {
		entry := plan.set[p]
		if id, ok := linkID(entry); ok {
			if other, taken := s.findOne(classUser, "authData."+p+".id", id); taken && other["objectId"] != d.id {
				return ErrAuthDataUsed
			}
		}
		merged[p] = entry
	}
	if plan.mfa != nil {
		plan.mfa.apply(d, merged)
	}
	if plan.response != nil {
		d.setEcho("authDataResponse", plan.response)
	}
	return nil
}

// authDataKeys are the lock keys of the provider ids a _User write links,
// so two sign-ups with one new id run one after the other.
func authDataKeys(op WriteOp) []string {
	var keys []string
	if op.authPlan != nil {
		for p, entry := range op.authPlan.set {
			if id, ok := entry["id"].(string); ok {
				keys = append(keys, "\x01auth\x00"+p+"\x00"+id)
			}
		}
		return keys
	}
	ad, _ := op.Body["authData"].(map[string]any)
	for p, v := range ad {
		entry, _ := v.(map[string]any)
		if id, ok := entry["id"].(string); ok {
			keys = append(keys, "\x01auth\x00"+p+"\x00"+id)
		}
	}
	return keys
}

// authDataIndexes are the paths of the provider ids users are found by.
func authDataIndexes(r *auth.Registry) []string {
	var paths []string
	for _, p := range r.Providers() {
		if p != auth.MFA {
			paths = append(paths, "authData."+p+".id")
		}
	}
	return paths
}

// linkID is the provider id an authData entry links by: a non-empty
// string, or none (a custom adapter's authData may have no id, and must
// then never match users that have none either).
func linkID(entry map[string]any) (string, bool) {
	id, ok := entry["id"].(string)
	return id, ok && id != ""
}
