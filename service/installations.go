package service

import (
	"regexp"
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

	s.installMu.Lock()
	defer s.installMu.Unlock()
	if err := s.ensureBuiltinSchema(classInstallation); err != nil {
		return InstallationResult{}, err
	}
	if !creating && token == "" && iid == "" && deviceType == "" {
		return s.updateInstallation(auth, id, body) // nothing identifying changes
	}

	var or []any
	if !creating {
		or = append(or, map[string]any{"objectId": id})
	}
	if iid != "" {
		or = append(or, map[string]any{"installationId": iid})
	}
	if token != "" {
		or = append(or, map[string]any{"deviceToken": token})
	}
	master := Auth{Master: true}
	found, err := s.Find(master, classInstallation, FindParams{Where: map[string]any{"$or": or}, Limit: maxInstallationMatches})
	if err != nil {
		return InstallationResult{}, err
	}
	var objectIDMatch, iidMatch schema.Object
	var tokenMatches []schema.Object
	for _, r := range found.Results {
		if !creating && r["objectId"] == id {
			objectIDMatch = r
		}
		if iid != "" && r["installationId"] == iid {
			iidMatch = r
		}
		if token != "" && r["deviceToken"] == token {
			tokenMatches = append(tokenMatches, r)
		}
	}
	if !creating {
		if objectIDMatch == nil {
			return InstallationResult{}, schema.Errorf(schema.CodeObjectNotFound, "Object not found for update.")
		}
		have, _ := objectIDMatch["installationId"].(string)
		if iidBody != "" && have != "" && iidBody != have {
			return InstallationResult{}, schema.Errorf(schema.CodeChangedImmutableField, "installationId may not be changed in this operation")
		}
		haveToken, _ := objectIDMatch["deviceToken"].(string)
		if token != "" && haveToken != "" && token != haveToken && iidBody == "" && have == "" {
			return InstallationResult{}, schema.Errorf(schema.CodeChangedImmutableField, "deviceToken may not be changed in this operation")
		}
		if deviceType != "" && deviceType != objectIDMatch["deviceType"] {
			return InstallationResult{}, schema.Errorf(schema.CodeChangedImmutableField, "deviceType may not be changed in this operation")
		}
	}
	idMatch := objectIDMatch
	if iidMatch != nil {
		idMatch = iidMatch
	}
	if creating && deviceType == "" && idMatch == nil {
		return InstallationResult{}, schema.Errorf(schema.CodeMissingRequiredField, "deviceType must be specified in this operation")
	}
	appID, _ := body["appIdentifier"].(string)

	target := "" // the installation the save updates; "" creates one
	if idMatch == nil {
		switch {
		case len(tokenMatches) == 0:
		case len(tokenMatches) == 1 && (tokenMatches[0]["installationId"] == nil || iid == ""):
			// One installation holds the token, and one side lacks an
			// installationId: it is this installation.
			target = tokenMatches[0]["objectId"].(string)
		case iidBody == "":
			return InstallationResult{}, schema.Errorf(schema.CodeInvalidInstallationID,
				"Must specify installationId when deviceToken matches multiple Installation objects")
		default:
			// The token moved to a new installation: older holders go.
			if err := s.deleteInstallations(token, appID, func(o schema.Object) bool { return o["installationId"] != iidBody }); err != nil {
				return InstallationResult{}, err
			}
		}
	} else {
		target = idMatch["objectId"].(string)
		switch {
		case len(tokenMatches) == 1 && tokenMatches[0]["installationId"] == nil && tokenMatches[0]["objectId"] != target:
			// The token's installation predates installationIds: merge
			// into it and drop the id match.
			if err := s.Delete(master, classInstallation, target); err != nil {
				return InstallationResult{}, err
			}
			target = tokenMatches[0]["objectId"].(string)
		case token != "" && iidBody != "" && idMatch["deviceToken"] != token:
			// This installation takes the token over: the others holding
			// it are stale (without an installationId in the body, Parse
			// cannot tell which to keep, and neither do we).
			stale := func(o schema.Object) bool { return o["installationId"] != iidBody && o["objectId"] != target }
			if err := s.deleteInstallations(token, appID, stale); err != nil {
				return InstallationResult{}, err
			}
		}
	}
	if target == "" {
		res, err := s.Create(auth, classInstallation, body)
		if err != nil {
			return InstallationResult{}, err
		}
		return InstallationResult{ObjectID: res.ObjectID, Created: true, CreatedAt: res.CreatedAt, Echo: res.Echo}, nil
	}
	return s.updateInstallation(auth, target, body)
}

func (s *Service) updateInstallation(auth Auth, id string, body map[string]any) (InstallationResult, error) {
	reply, err := s.Update(auth, classInstallation, id, body)
	if err != nil {
		return InstallationResult{}, err
	}
	return InstallationResult{ObjectID: id, Reply: reply}, nil
}

// deleteInstallations removes the installations holding token (within
// one appIdentifier when given) that pass the filter.
func (s *Service) deleteInstallations(token, appID string, filter func(schema.Object) bool) error {
	where := map[string]any{"deviceToken": token}
	if appID != "" {
		where["appIdentifier"] = appID
	}
	master := Auth{Master: true}
	found, err := s.Find(master, classInstallation, FindParams{Where: where, Limit: maxInstallationMatches})
	if err != nil {
		return err
	}
	for _, o := range found.Results {
		if !filter(o) {
			continue
		}
		if err := s.Delete(master, classInstallation, o["objectId"].(string)); err != nil {
			if pe, ok := schema.AsError(err); ok && pe.Code == schema.CodeObjectNotFound {
				continue
			}
			return err
		}
	}
	return nil
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
		for k := range BuiltinClassFields[class] {
			if _, ok := c.Fields[k]; !ok {
				return false
			}
		}
		return true
	}
	if complete(s.Class(class)) {
		return nil
	}
	s.schemaMu.Lock()
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
		for k, f := range BuiltinClassFields[class] {
			if _, ok := next.Fields[k]; !ok {
				next.Fields[k] = f
			}
		}
	}
	return s.storeClass(next)
}
