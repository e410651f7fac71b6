package service

import (
	"hash/maphash"
	"regexp"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

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
func (s *Service) SaveInstallation(auth Auth, id string, body map[string]any) (InstallationResult, error) {
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

	if err := s.ensureBuiltinSchema(classInstallation); err != nil {
		return InstallationResult{}, err
	}
	if !creating && token == "" && iid == "" && deviceType == "" {
		return s.updateInstallation(auth, id, body) // nothing identifying changes
	}
	unlock := s.lockInstallIdentity(iid, token)
	defer unlock()
	// Which installation to save is decided on memory: when another
	// instance saved one of the same identity meanwhile, catch up and
	// decide again (decide.go).
	var serial serialised
	defer serial.release()
	for attempt := 1; ; attempt++ {
		res, err := s.saveIdentified(auth, id, iid, iidBody, token, deviceType, body)
		serial.release()
		if !isStale(err) {
			return res, err
		}
		if attempt == maxDecideAttempts {
			return InstallationResult{}, errKeptChanging
		}
		if err := s.serialise(&serial, err); err != nil {
			return InstallationResult{}, err
		}
	}
}

// saveIdentified is one decision of SaveInstallation: find the
// installations of the identity, pick the one to save and the stale ones
// to remove, and write them in one commit.
func (s *Service) saveIdentified(auth Auth, id, iid, iidBody, token, deviceType string, body map[string]any) (InstallationResult, error) {
	found, err := s.Find(Auth{Master: true}, classInstallation, FindParams{Where: identityWhere(id, iid, token), Limit: maxInstallationMatches})
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
	ops := make([]WriteOp, 0, len(save.stale)+1)
	for _, staleID := range save.stale {
		ops = append(ops, WriteOp{Method: MethodDelete, Class: classInstallation, ID: staleID, asServer: true})
	}
	if save.target == "" {
		ops = append(ops, WriteOp{Method: MethodCreate, Class: classInstallation, Body: body})
	} else {
		ops = append(ops, WriteOp{Method: MethodUpdate, Class: classInstallation, ID: save.target, Body: body})
	}
	// A stale holder another instance removed first (its own save of the
	// token) makes the commit stale: SaveInstallation decides again.
	results, err := s.writeAttempts(auth, ops, true, 1)
	if err != nil {
		return InstallationResult{}, err
	}
	last := results[len(results)-1]
	if save.target == "" {
		return InstallationResult{ObjectID: last.Create.ObjectID, Created: true, CreatedAt: last.Create.CreatedAt, Echo: last.Create.Echo}, nil
	}
	return InstallationResult{ObjectID: save.target, Reply: last.Update.Reply()}, nil
}

// lockInstallIdentity takes the installation locks of an installationId and
// a deviceToken, in a fixed order.
func (s *Service) lockInstallIdentity(iid, token string) (unlock func()) {
	var idx []int
	for _, k := range []string{"iid\x00" + iid, "token\x00" + token} {
		if strings.HasSuffix(k, "\x00") {
			continue // no such identity
		}
		i := int(maphash.String(s.seed, k) % uint64(len(s.installLocks)))
		if len(idx) == 0 || idx[0] != i {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	for _, i := range idx {
		s.installLocks[i].Lock()
	}
	return func() {
		for j := len(idx) - 1; j >= 0; j-- {
			s.installLocks[idx[j]].Unlock()
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

func (s *Service) updateInstallation(auth Auth, id string, body map[string]any) (InstallationResult, error) {
	reply, err := s.Update(auth, classInstallation, id, body)
	if err != nil {
		return InstallationResult{}, err
	}
	return InstallationResult{ObjectID: id, Reply: reply.Reply()}, nil
}

// GetInstallation reads one installation; its ACL applies.
func (s *Service) GetInstallation(auth Auth, id string, opts ReadOptions) (schema.Object, error) {
	return s.Get(auth, classInstallation, id, opts)
}

// FindInstallations queries installations: the master key may ask
// anything; other callers must constrain installationId (to a value or a
// list), and the ACLs still apply.
func (s *Service) FindInstallations(auth Auth, p FindParams) (FindResult, error) {
	if !auth.Master && !constrainsInstallationID(p.Where) {
		return FindResult{}, schema.Errorf(schema.CodeOperationForbidden,
			"Clients aren't allowed to perform the find operation on the installation collection.")
	}
	return s.Find(auth, classInstallation, p)
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
func (s *Service) DeleteInstallation(auth Auth, id string) error {
	if !auth.Master {
		return schema.Errorf(schema.CodeOperationForbidden,
			"Clients aren't allowed to perform the delete operation on the installation collection.")
	}
	return s.Delete(auth, classInstallation, id)
}

// ensureBuiltinSchema gives a built-in class its default fields, so that
// their types are locked before clients write to it.
func (s *Service) ensureBuiltinSchema(class string) error {
	complete := func(c *schema.Class) bool {
		if c == nil {
			return false
		}
		for k := range schema.BuiltinFields(class) {
			if _, ok := c.Fields[k]; !ok {
				return false
			}
		}
		return true
	}
	if complete(s.Class(class)) {
		return nil
	}
	defer s.announceSchemas() // after the unlock
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if complete(cur) {
		return nil
	}
	var next *schema.Class
	if cur == nil {
		next = s.newClass(class)
	} else {
		next = cur.Clone()
		for k, f := range schema.BuiltinFields(class) {
			if _, ok := next.Fields[k]; !ok {
				next.Fields[k] = f
			}
		}
	}
	return s.storeClass(next)
}
