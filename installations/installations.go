// Package installations owns Parse's rules for _Installation
// (/installations): identification by installationId and deviceToken,
// deduplication of a save that names an existing installation, removal
// of other holders of the same deviceToken in the same commit, channel
// names, and who may find or delete installations. It works through the
// narrow Core the service offers; the service never imports it. Sending
// pushes is package push's.
package installations

import (
	"hash/maphash"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// classInstallation is Parse's installations class.
const classInstallation = "_Installation"

// Core is what the installation rules need of the service: finds, reads
// and writes, the built-in schema, and commits decided on a read that are
// decided again while another instance changed what they read.
type Core interface {
	Find(a service.Auth, class string, p service.FindParams) (service.FindResult, error)
	Get(a service.Auth, class, id string, opts service.ReadOptions) (schema.Object, error)
	Update(a service.Auth, class, id string, body map[string]any) (service.UpdateResult, error)
	Delete(a service.Auth, class, id string) error
	EnsureBuiltinSchema(class string) error
	CommitDecided(a service.Auth, ops []service.WriteOp) ([]service.WriteResult, error)
	DecideUntilCurrent(decide func() error) error
}

// Installations applies the installation rules over a Core. One per
// service: its locks serialize the saves of one identity in this process.
type Installations struct {
	core Core
	seed maphash.Seed
	// locks are held while saving an installation of an installationId
	// or a deviceToken (striped by the value), because deduplication
	// reads before it writes.
	locks [64]sync.Mutex
}

// New returns the installation rules applied through core.
func New(core Core) *Installations { return &Installations{core: core, seed: maphash.MakeSeed()} }

// Installations (/installations and /classes/_Installation): Parse's rules
// around the generic write and read path. installationId is lower-cased
// and may never change; deviceType is required on a new installation and
// may never change; a 64-character (APNs) deviceToken is lower-cased; a
// save that names an existing installation (by installationId, or by a
// deviceToken nobody else claims) updates it instead of creating a
// duplicate, and other installations holding the same deviceToken are
// removed; channels are validated. Find needs the master key or an
// installationId constraint; delete needs the master key. The generic path
// applies ACLs (and, for get, create and update, ignores the CLP, as the
// specification's table says).

var channelNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// maxInstallationMatches bounds the installations one deduplication looks at.
const maxInstallationMatches = 1000

// InstallationResult is the outcome of an installation save: a new
// object (Created, with CreatedAt) or an update of an existing one
// (Reply holds updatedAt and operator results).
type InstallationResult struct {
	ObjectID  string
	Created   bool
	CreatedAt string
	Echo      map[string]any
	Reply     map[string]any
}

// ValidChannelName reports whether name may name a push channel: the empty
// broadcast channel, or a letter followed by letters, digits and _.
func ValidChannelName(name string) bool {
	return name == "" || channelNamePattern.MatchString(name)
}

func channelError(v any) error {
	return schema.Errorf(schema.CodeInvalidChannelName,
		"Invalid channel name: %v. Channel names start with a letter and hold only letters, digits and underscores.", v)
}

var errChannelsArray = schema.Errorf(schema.CodeInvalidChannelsArray, "channels must be an array of channel names")

// checkChannels validates a channels value or operator.
func checkChannels(v any) error {
	check := func(list []any) error {
		for _, e := range list {
			name, ok := e.(string)
			if !ok {
				return errChannelsArray
			}
			if !ValidChannelName(name) {
				return channelError(name)
			}
		}
		return nil
	}
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return check(x)
	case map[string]any:
		switch x["__op"] {
		case "Delete":
			return nil
		case "Add", "AddUnique", "Remove":
			list, ok := x["objects"].([]any)
			if !ok {
				return errChannelsArray
			}
			return check(list)
		}
	}
	return errChannelsArray
}

// installationString reads one of the identifying string fields of a body:
// absent or null gives "", an operator or another type an error.
func installationString(body map[string]any, key string, creating bool) (string, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return "", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case map[string]any:
		if _, isOp := x["__op"]; isOp {
			if key == "deviceToken" && x["__op"] == "Delete" && !creating {
				return "", nil
			}
			return "", schema.Errorf(schema.CodeChangedImmutableField, "%s may not be changed in this operation", key)
		}
	}
	f, _, _ := schema.TypeOf(v)
	return "", schema.Errorf(schema.CodeIncorrectType, "schema mismatch for _Installation.%s; expected String but got %s", key, describe(f))
}

// SaveInstallation creates (id == "") or updates an installation with
// Parse's identification and deduplication rules.
func (x *Installations) SaveInstallation(auth service.Auth, id string, body map[string]any) (InstallationResult, error) {
	if auth.ReadOnly {
		return InstallationResult{}, schema.Errorf(schema.CodeOperationForbidden,
			"read-only masterKey isn't allowed to perform the write operation.")
	}
	creating := id == ""
	body = schema.CopyObject(body)
	iidBody, err := installationString(body, "installationId", creating)
	if err != nil {
		return InstallationResult{}, err
	}
	token, err := installationString(body, "deviceToken", creating)
	if err != nil {
		return InstallationResult{}, err
	}
	deviceType, err := installationString(body, "deviceType", creating)
	if err != nil {
		return InstallationResult{}, err
	}
	if v, ok := body["channels"]; ok {
		if err := checkChannels(v); err != nil {
			return InstallationResult{}, err
		}
	}
	if len(token) == 64 {
		token = strings.ToLower(token)
		body["deviceToken"] = token
	}
	if iidBody != "" {
		iidBody = strings.ToLower(iidBody)
		body["installationId"] = iidBody
	}
	if creating && token == "" && iidBody == "" && auth.InstallationID == "" {
		return InstallationResult{}, schema.Errorf(schema.CodeMissingRequiredField,
			"at least one ID field (deviceToken, installationId) must be specified in this operation")
	}
	// On a create, the client's own installation id (header or JS SDK
	// envelope) finds its installation; it is never copied into a new one.
	// An update names its object by objectId and is never redirected to
	// the caller's own installation (Parse Server would redirect it).
	iid := iidBody
	if iid == "" && !auth.Master && creating {
		iid = strings.ToLower(auth.InstallationID)
	}

	if err := x.core.EnsureBuiltinSchema(classInstallation); err != nil {
		return InstallationResult{}, err
	}
	if !creating && token == "" && iid == "" && deviceType == "" {
		return x.updateInstallation(auth, id, body) // nothing identifying changes
	}
	unlock := x.lockIdentity(iid, token)
	defer unlock()
	// Which installation to save is decided on memory: when another
	// instance saved one of the same identity meanwhile, or removed a
	// holder this save meant to remove, the commit is stale and the core
	// catches up for it to decide again.
	var res InstallationResult
	err = x.core.DecideUntilCurrent(func() (err error) {
		res, err = x.saveIdentified(auth, id, iid, iidBody, token, deviceType, body)
		return err
	})
	if err != nil {
		return InstallationResult{}, err
	}
	return res, nil
}

// saveIdentified is one decision of SaveInstallation: find the
// installations of the identity, pick the one to save and the stale ones
// to remove, and write them in one commit.
func (x *Installations) saveIdentified(auth service.Auth, id, iid, iidBody, token, deviceType string, body map[string]any) (InstallationResult, error) {
	found, err := x.core.Find(service.Auth{Master: true}, classInstallation, service.FindParams{Where: identityWhere(id, iid, token), Limit: maxInstallationMatches})
	if err != nil {
		return InstallationResult{}, err
	}
	appID, _ := body["appIdentifier"].(string)
	save, err := decideInstallation(installIdentity{objectID: id, iid: iid, iidBody: iidBody, token: token,
		deviceType: deviceType, appID: appID}, found.Results)
	if err != nil {
		return InstallationResult{}, err
	}
	// One atomic commit: the stale installations go with the save, or
	// nothing happens.
	ops := make([]service.WriteOp, 0, len(save.stale)+1)
	for _, staleID := range save.stale {
		ops = append(ops, service.ServerDelete(classInstallation, staleID))
	}
	if save.target == "" {
		ops = append(ops, service.WriteOp{Method: service.MethodCreate, Class: classInstallation, Body: body})
	} else {
		ops = append(ops, service.WriteOp{Method: service.MethodUpdate, Class: classInstallation, ID: save.target, Body: body})
	}
	// A stale holder another instance removed first (its own save of the
	// token) makes the commit stale: SaveInstallation decides again.
	results, err := x.core.CommitDecided(auth, ops)
	if err != nil {
		return InstallationResult{}, err
	}
	last := results[len(results)-1]
	if save.target == "" {
		return InstallationResult{ObjectID: last.Create.ObjectID, Created: true, CreatedAt: last.Create.CreatedAt, Echo: last.Create.Echo}, nil
	}
	return InstallationResult{ObjectID: save.target, Reply: last.Update.Reply()}, nil
}

// lockIdentity takes the installation locks of an installationId and
// a deviceToken, in a fixed order.
func (x *Installations) lockIdentity(iid, token string) (unlock func()) {
	var idx []int
	for _, k := range []string{"iid\x00" + iid, "token\x00" + token} {
		if strings.HasSuffix(k, "\x00") {
			continue // no such identity
		}
		i := int(maphash.String(x.seed, k) % uint64(len(x.locks)))
		if len(idx) == 0 || idx[0] != i {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	for _, i := range idx {
		x.locks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			x.locks[idx[j]].Unlock()
		}
	}
}

// identityWhere finds the installations a save may be about: its own
// objectId (updates), its installationId, its deviceToken.
func identityWhere(objectID, iid, token string) map[string]any {
	var or []any
	if objectID != "" {
		or = append(or, map[string]any{"objectId": objectID})
	}
	if iid != "" {
		or = append(or, map[string]any{"installationId": iid})
	}
	if token != "" {
		or = append(or, map[string]any{"deviceToken": token})
	}
	return map[string]any{"$or": or}
}

// installIdentity is what an installation save says about which device it
// is. objectID is set for updates; iid is the installationId that finds
// the installation (the body's, or the caller's own on a create), iidBody
// the body's alone.
type installIdentity struct {
	objectID, iid, iidBody, token, deviceType, appID string
}

// installationSave is the decision of a save: the installation it updates
// ("" creates one) and the stale ones removed with it.
type installationSave struct {
	target string
	stale  []string
}

// decideInstallation applies Parse's identification and deduplication
// rules to the installations found by identityWhere. It is pure: the
// caller commits the decision in one write.
func decideInstallation(in installIdentity, found []schema.Object) (installationSave, error) {
	creating := in.objectID == ""
	var objectIDMatch, iidMatch schema.Object
	var tokenMatches []schema.Object
	for _, r := range found {
		if !creating && r["objectId"] == in.objectID {
			objectIDMatch = r
		}
		if in.iid != "" && r["installationId"] == in.iid {
			iidMatch = r
		}
		if in.token != "" && r["deviceToken"] == in.token {
			tokenMatches = append(tokenMatches, r)
		}
	}
	if !creating {
		if err := checkImmutableIdentity(in, objectIDMatch); err != nil {
			return installationSave{}, err
		}
	}
	idMatch := objectIDMatch
	if iidMatch != nil {
		idMatch = iidMatch
	}
	if creating && in.deviceType == "" && idMatch == nil {
		return installationSave{}, schema.Errorf(schema.CodeMissingRequiredField, "deviceType must be specified in this operation")
	}
	// staleHolders are the other holders of the token (within one
	// appIdentifier when given) that keep must not keep.
	staleHolders := func(keep func(schema.Object) bool) []string {
		var ids []string
		for _, o := range tokenMatches {
			if (in.appID == "" || o["appIdentifier"] == in.appID) && !keep(o) {
				ids = append(ids, o["objectId"].(string))
			}
		}
		return ids
	}
	if idMatch == nil {
		switch {
		case len(tokenMatches) == 0:
			return installationSave{}, nil
		case len(tokenMatches) == 1 && (tokenMatches[0]["installationId"] == nil || in.iid == ""):
			// One installation holds the token, and one side lacks an
			// installationId: it is this installation.
			return installationSave{target: tokenMatches[0]["objectId"].(string)}, nil
		case in.iidBody == "":
			return installationSave{}, schema.Errorf(schema.CodeInvalidInstallationID,
				"Must specify installationId when deviceToken matches multiple Installation objects")
		}
		// The token moved to a new installation: older holders go.
		return installationSave{stale: staleHolders(func(o schema.Object) bool { return o["installationId"] == in.iidBody })}, nil
	}
	target := idMatch["objectId"].(string)
	switch {
	case len(tokenMatches) == 1 && tokenMatches[0]["installationId"] == nil && tokenMatches[0]["objectId"] != target:
		// The token's installation predates installationIds: merge into
		// it and drop the id match.
		return installationSave{target: tokenMatches[0]["objectId"].(string), stale: []string{target}}, nil
	case in.token != "" && in.iidBody != "" && idMatch["deviceToken"] != in.token:
		// This installation takes the token over: the others holding it
		// are stale (without an installationId in the body, Parse cannot
		// tell which to keep, and neither do we).
		return installationSave{target: target, stale: staleHolders(func(o schema.Object) bool {
			return o["installationId"] == in.iidBody || o["objectId"] == target
		})}, nil
	}
	return installationSave{target: target}, nil
}

// checkImmutableIdentity refuses an update of installation have that would
// change its installationId, deviceToken or deviceType.
func checkImmutableIdentity(in installIdentity, have schema.Object) error {
	if have == nil {
		return schema.Errorf(schema.CodeObjectNotFound, "Object not found for update.")
	}
	haveIID, _ := have["installationId"].(string)
	if in.iidBody != "" && haveIID != "" && in.iidBody != haveIID {
		return schema.Errorf(schema.CodeChangedImmutableField, "installationId may not be changed in this operation")
	}
	haveToken, _ := have["deviceToken"].(string)
	if in.token != "" && haveToken != "" && in.token != haveToken && in.iidBody == "" && haveIID == "" {
		return schema.Errorf(schema.CodeChangedImmutableField, "deviceToken may not be changed in this operation")
	}
	if in.deviceType != "" && in.deviceType != have["deviceType"] {
		return schema.Errorf(schema.CodeChangedImmutableField, "deviceType may not be changed in this operation")
	}
	return nil
}

func (x *Installations) updateInstallation(auth service.Auth, id string, body map[string]any) (InstallationResult, error) {
	reply, err := x.core.Update(auth, classInstallation, id, body)
	if err != nil {
		return InstallationResult{}, err
	}
	return InstallationResult{ObjectID: id, Reply: reply.Reply()}, nil
}

// GetInstallation reads one installation; its ACL applies.
func (x *Installations) GetInstallation(auth service.Auth, id string, opts service.ReadOptions) (schema.Object, error) {
	return x.core.Get(auth, classInstallation, id, opts)
}

// FindInstallations queries installations: the master key may ask
// anything; other callers must constrain installationId (to a value or a
// list), and the ACLs still apply.
func (x *Installations) FindInstallations(auth service.Auth, p service.FindParams) (service.FindResult, error) {
	if !auth.Master && !constrainsInstallationID(p.Where) {
		return service.FindResult{}, schema.Errorf(schema.CodeOperationForbidden,
			"Clients aren't allowed to perform the find operation on the installation collection.")
	}
	return x.core.Find(auth, classInstallation, p)
}

// constrainsInstallationID reports whether a where pins installationId to
// a string or a list of strings at its top level.
func constrainsInstallationID(where map[string]any) bool {
	switch v := where["installationId"].(type) {
	case string:
		return true
	case map[string]any:
		if len(v) != 1 {
			return false
		}
		if _, ok := v["$eq"].(string); ok {
			return true
		}
		if list, ok := v["$in"].([]any); ok {
			for _, e := range list {
				if _, isStr := e.(string); !isStr {
					return false
				}
			}
			return true
		}
	}
	if and, ok := where["$and"].([]any); ok {
		for _, sub := range and {
			if m, ok := sub.(map[string]any); ok && constrainsInstallationID(m) {
				return true
			}
		}
	}
	return false
}

// DeleteInstallation removes an installation: master key only.
func (x *Installations) DeleteInstallation(auth service.Auth, id string) error {
	if !auth.Master {
		return schema.Errorf(schema.CodeOperationForbidden,
			"Clients aren't allowed to perform the delete operation on the installation collection.")
	}
	return x.core.Delete(auth, classInstallation, id)
}

// describe names a field's type as schema mismatch messages do.
func describe(f schema.Field) string {
	if f.TargetClass != "" {
		return string(f.Type) + "<" + f.TargetClass + ">"
	}
	return string(f.Type)
}
