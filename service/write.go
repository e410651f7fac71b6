package service

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	gojson "github.com/goccy/go-json"
	"golang.org/x/crypto/bcrypt"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// MaxObjectBytes caps one stored object's encoded size (116 beyond it).
const MaxObjectBytes = 16 << 20

// MaxFieldsPerClass bounds a class's schema, the master key included: one
// write with a hundred thousand keys must not make a hundred thousand
// fields (Parse Server on PostgreSQL stops near 1,600 columns).
const MaxFieldsPerClass = 1000

func tooManyFields(class string) error {
	return schema.Errorf(schema.CodeInvalidJSON, "Class %s cannot have more than %d fields.", class, MaxFieldsPerClass)
}

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// DefaultObjectIDSize is the length of the objectIds Quarry makes, as
// Parse Server's (objectIdSize changes it).
const DefaultObjectIDSize = 10

// NewObjectID returns DefaultObjectIDSize random alphanumerics from
// crypto/rand.
func NewObjectID() string { return newObjectIDOfSize(DefaultObjectIDSize) }

// newObjectIDOfSize returns n random alphanumerics from crypto/rand.
func newObjectIDOfSize(n int) string {
	out := make([]byte, 0, n)
	var buf [16]byte
	for len(out) < n {
		if _, err := rand.Read(buf[:]); err != nil {
			panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS entropy source is gone
		}
		for _, b := range buf {
			// 248 = 4*62: rejecting above it keeps every symbol equally likely.
			if b < 248 && len(out) < n {
				out = append(out, idAlphabet[int(b)%len(idAlphabet)])
			}
		}
	}
	return string(out)
}

// UpdateResult is the reply to an update: Reply gives its wire form.
type UpdateResult struct {
	UpdatedAt string
	// Echo holds the operator results and the fields an afterSave trigger
	// changed, merged into the reply.
	Echo map[string]any
	// SessionToken is the new session of a user who changed their own
	// password; "" otherwise.
	SessionToken string
}

// Reply is the update's reply body: updatedAt, the echoed fields and the
// new session token, if any.
func (r UpdateResult) Reply() map[string]any {
	out := map[string]any{"updatedAt": r.UpdatedAt}
	for k, v := range r.Echo {
		out[k] = v
	}
	if r.SessionToken != "" {
		out["sessionToken"] = r.SessionToken
	}
	return out
}

// has reports whether the reply carries key.
func (r UpdateResult) has(key string) bool {
	if _, ok := r.Echo[key]; ok {
		return true
	}
	return key == "updatedAt" || key == "sessionToken" && r.SessionToken != ""
}

// CreateResult is the reply to a create.
type CreateResult struct {
	ObjectID  string
	CreatedAt string
	Echo      map[string]any // operator results, merged into the reply
}

// checkWritable refuses writes the caller may never make to a class.
func (s *Service) checkWritable(auth Auth, class string, creating bool) error {
	if auth.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to perform the write operation.")
	}
	if !schema.ValidClassName(class) {
		return schema.ClassNameError(class)
	}
	// Built-in classes are the server's, never "client class creation".
	if creating && !auth.Master && !auth.Maintenance && !s.opts.AllowClientClassCreation && s.Class(class) == nil && !schema.IsBuiltinClass(class) {
		return schema.Errorf(schema.CodeOperationForbidden,
			"This user is not allowed to access non-existent class: %s", class)
	}
	return nil
}

// Create stores a new object and returns its id and creation time.
func (s *Service) Create(auth Auth, class string, body map[string]any) (CreateResult, error) {
	results, err := s.write(auth, []WriteOp{{Method: MethodCreate, Class: class, Body: body}}, true)
	if err != nil {
		return CreateResult{}, err
	}
	return results[0].Create, results[0].Err
}

// Update applies a body (plain values and operators) to an existing object
// and returns updatedAt plus the operator results.
func (s *Service) Update(auth Auth, class, id string, body map[string]any) (UpdateResult, error) {
	results, err := s.write(auth, []WriteOp{{Method: MethodUpdate, Class: class, ID: id, Body: body}}, true)
	if err != nil {
		return UpdateResult{}, err
	}
	return results[0].Update, results[0].Err
}

// Delete removes an object.
func (s *Service) Delete(auth Auth, class, id string) error {
	results, err := s.write(auth, []WriteOp{{Method: MethodDelete, Class: class, ID: id}}, true)
	if err != nil {
		return err
	}
	return results[0].Err
}

// Method is the kind of a write.
type Method int

// Write kinds.
const (
	MethodCreate Method = iota
	MethodUpdate
	MethodDelete
)

// WriteOp is one object write, alone or inside a batch.
type WriteOp struct {
	Method Method
	Class  string
	ID     string
	Body   map[string]any

	// hashedPassword is the bcrypt hash of Body's password, computed by
	// write before it takes any lock.
	hashedPassword string
	// authPlan is Body's authData, checked by the provider adapters
	// before any lock (authdata.go).
	authPlan *AuthPlan
	// asServer runs the op with the master key whoever the caller is: the
	// server's own part of a write, such as the stale installations an
	// installation save removes in the same commit.
	asServer bool
	// edit changes the stored object of an update under its lock, after
	// Body: the server's own fields (email flows, lockout; accounts.go).
	edit func(schema.Object) error
	// keepSessions spares the user's sessions when edit's update sets a
	// new password (revokeSessionOnPasswordReset false).
	keepSessions bool
	// quiet marks the server's bookkeeping (lockout counts, link tokens):
	// no triggers run and updatedAt stays.
	quiet bool
}

// WriteResult is the outcome of one WriteOp.
type WriteResult struct {
	Create CreateResult
	Update UpdateResult
	Err    error
}

// write runs ops as one atomic, durable unit: either every op is valid and
// all are committed together, or the first error is returned and nothing
// is written. Non-atomic batches call it once per op.
func (s *Service) write(auth Auth, ops []WriteOp, atomic bool) ([]WriteResult, error) {
	return s.writeAttempts(auth, ops, atomic, maxDecideAttempts)
}

// writeAttempts is write, deciding ops at most attempts times (decide.go):
// with 1, a write decided on a stale copy fails with store.ErrStale for
// the caller to decide again from its own inputs.
func (s *Service) writeAttempts(auth Auth, ops []WriteOp, atomic bool, attempts int) ([]WriteResult, error) {
	if !auth.internal {
		for _, op := range ops {
			if err := s.checkDenylist(op.Body); err != nil { // denylist.go
				return nil, err
			}
		}
	}
	s.catchUpForIDs(auth, ops) // current.go
	// bcrypt takes tens of milliseconds: never under a lock.
	for i, op := range ops {
		if p, ok := op.Body["password"].(string); ok && p != "" && op.Class == classUser && op.Method != MethodDelete {
			if err := s.checkNewPassword(op, p); err != nil { // password_policy.go
				return nil, err
			}
			hash, err := bcrypt.GenerateFromPassword(bcryptInput(p), s.opts.PasswordHashCost)
			if err != nil {
				return nil, fmt.Errorf("hashing a password: %w", err)
			}
			ops[i].hashedPassword = string(hash)
		}
	}
	if err := s.checkAuthData(auth, ops); err != nil { // asks providers: no lock held (authdata.go)
		return nil, err
	}
	triggers, err := s.beforeTriggers(auth, ops) // cloud code (hooks.go)
	if err != nil {
		return nil, err
	}
	results, drafts, users, err := s.writeDecided(auth, ops, atomic, attempts)
	if err != nil {
		return nil, err
	}
	// Verification emails of new tokens (email_flows.go).
	s.mailAfterWrite(drafts)
	s.afterTriggers(auth, triggers, ops, results, drafts) // cloud code (hooks.go)
	s.announce()
	// Cascades run after the locks are released: they write other objects.
	for _, u := range users {
		// A deleted user's sessions die with them, and every session
		// opened with an old password dies with it, whoever changed it.
		if err := s.revokeSessions(u.id, ""); err != nil {
			return nil, err
		}
		if u.deleted || auth.Master {
			continue
		}
		// The user who changed their password (only they may) carries on
		// with a new session, whose token the reply gives.
		sess, err := s.createSession(u.id, auth.InstallationID, map[string]any{"action": "signup", "authProvider": "password"}, nil)
		if err != nil {
			return nil, err
		}
		results[u.result].Update.SessionToken, _ = sess["sessionToken"].(string)
	}
	return results, nil
}

// userCascade is a committed _User write whose sessions must end: a
// delete, or an update that set a new password (results[result]).
type userCascade struct {
	id      string
	result  int
	deleted bool
}

func (s *Service) writeLocked(auth Auth, ops []WriteOp, atomic bool) ([]WriteResult, []*draft, []userCascade, error) {
	keys := make([]string, 0, len(ops))
	for i := range ops {
		if ops[i].Method == MethodCreate {
			id, err := s.newID(ops[i])
			if err != nil {
				return nil, nil, nil, err
			}
			ops[i].ID = id
		}
		keys = append(keys, ops[i].Class+"\x00"+ops[i].ID)
	}
	// A unique username, email or role name is checked and claimed under
	// the lock of its (lower-cased) value, so two writes claiming one value
	// run one after the other and unrelated sign-ups run in parallel.
	for _, op := range ops {
		keys = append(keys, uniqueValueKeys(op)...)
	}
	unshare := s.shareClasses(ops)
	defer unshare()
	unlock, err := s.lockObjectsOrOutage(keys)
	if err != nil {
		return nil, nil, nil, err
	}
	defer unlock()
	// Memory is as current as this, under the objects' locks (decide.go).
	base, err := s.baseFor(ops)
	if err != nil {
		return nil, nil, nil, err
	}

	now := schema.FormatTime(s.opts.Now())
	// overlay lets later ops in a transaction see earlier ones' effects;
	// a single op needs neither map.
	var overlay map[string]schema.Object
	var deleted map[string]bool
	if len(ops) > 1 {
		overlay, deleted = map[string]schema.Object{}, map[string]bool{}
	}
	drafts := make([]*draft, 0, len(ops))
	results := make([]WriteResult, len(ops))
	for i, op := range ops {
		opAuth := auth
		if op.asServer {
			opAuth = Auth{Master: true}
		}
		d, err := s.prepare(opAuth, op, now, overlay, deleted)
		if err != nil {
			if atomic && clientOps(ops) > 1 {
				return nil, nil, nil, annotate(err, i)
			}
			return nil, nil, nil, err
		}
		drafts = append(drafts, d)
		if overlay != nil {
			k := op.Class + "\x00" + d.id
			if op.Method == MethodDelete {
				deleted[k] = true
				delete(overlay, k)
			} else {
				overlay[k] = d.obj
			}
		}
		switch op.Method {
		case MethodCreate:
			results[i].Create = CreateResult{ObjectID: d.id, CreatedAt: now, Echo: d.echo}
		case MethodUpdate:
			results[i].Update = UpdateResult{UpdatedAt: now, Echo: maps.Clone(d.echo)}
		}
	}
	if err := s.commit(auth, drafts, base, nil); err != nil {
		return nil, nil, nil, err
	}
	var users []userCascade
	for i, d := range drafts {
		switch {
		case d.class != classUser:
		case d.obj == nil:
			users = append(users, userCascade{id: d.id, result: i, deleted: true})
		case ops[i].Method == MethodUpdate && d.passwordChanged && !ops[i].keepSessions:
			users = append(users, userCascade{id: d.id, result: i})
		}
	}
	return results, drafts, users, nil
}

// uniqueValueKeys are the lock keys of the unique values op sets.
func uniqueValueKeys(op WriteOp) []string {
	var keys []string
	switch op.Class {
	case classUser:
		for _, field := range []string{"username", "email"} {
			if v, ok := op.Body[field].(string); ok {
				keys = append(keys, "\x01"+field+"\x00"+strings.ToLower(v))
			}
		}
		keys = append(keys, authDataKeys(op)...)
	case classRole:
		if v, ok := op.Body["name"].(string); ok {
			keys = append(keys, "\x01role\x00"+v)
		}
	}
	return keys
}

// clientOps counts the ops the client asked for (not the server's own).
func clientOps(ops []WriteOp) int {
	n := 0
	for _, op := range ops {
		if !op.asServer {
			n++
		}
	}
	return n
}

func annotate(err error, i int) error {
	if pe, ok := schema.AsError(err); ok {
		return &schema.Error{Code: pe.Code, Message: fmt.Sprintf("batch item %d: %s", i, pe.Message)}
	}
	return err
}

// prepare validates one op against the current data (seen through the
// transaction's overlay) and returns its draft.
func (s *Service) prepare(auth Auth, op WriteOp, now string, overlay map[string]schema.Object, deleted map[string]bool) (*draft, error) {
	if err := s.checkWritable(auth, op.Class, op.Method == MethodCreate); err != nil {
		return nil, err
	}
	if op.Method == MethodCreate {
		if !auth.Master && !auth.internal && !auth.Maintenance {
			if _, err := s.checkCLP(auth, op.Class, opCreate); err != nil {
				return nil, err
			}
		}
		body := op.Body
		if _, custom := body["objectId"]; custom && s.opts.AllowCustomObjectID {
			if err := s.checkNewID(op, overlay); err != nil {
				return nil, err
			}
			body = maps.Clone(body) // the caller's body is decided again on a retry
			delete(body, "objectId")
		}
		d := newDraft(op.Class, op.ID, nil)
		d.hashedPassword = op.hashedPassword
		d.authPlan = op.authPlan
		if err := d.apply(body, true); err != nil {
			return nil, err
		}
		d.obj["objectId"] = op.ID
		d.obj["createdAt"] = now
		d.obj["updatedAt"] = now
		if err := s.classRules(auth, d, body); err != nil {
			return nil, err
		}
		if err := s.applyFieldOptions(d, body); err != nil {
			return nil, err
		}
		return d, nil
	}
	k := op.Class + "\x00" + op.ID
	cur, ok := overlay[k]
	if !ok && !deleted[k] {
		if s.isSQLClass(op.Class) {
			var err error
			if cur, ok, err = s.getSQL(auth.Context(), op.Class, op.ID); err != nil {
				return nil, err
			}
		} else if c := s.data.Collection(op.Class, false); c != nil {
			cur, ok = c.Get(op.ID)
		}
	}
	if !ok {
		return nil, schema.ErrObjectNotFound
	}
	writeOp := opUpdate
	if op.Method == MethodDelete {
		writeOp = opDelete
	}
	if err := s.checkWrite(auth, op.Class, writeOp, cur); err != nil {
		return nil, err
	}
	d := newDraft(op.Class, op.ID, cur)
	if op.Method == MethodDelete {
		d.obj = nil
		return d, nil
	}
	d.hashedPassword = op.hashedPassword
	d.authPlan = op.authPlan
	if err := d.apply(op.Body, false); err != nil {
		return nil, err
	}
	if op.edit != nil {
		if err := op.edit(d.obj); err != nil {
			return nil, err
		}
	}
	if !op.quiet {
		d.obj["updatedAt"] = now
	}
	if err := s.classRules(auth, d, op.Body); err != nil {
		return nil, err
	}
	if err := s.applyFieldOptions(d, op.Body); err != nil {
		return nil, err
	}
	return d, nil
}

// commit makes drafts durable in one store commit, then updates memory and
// announces the changes. Schema additions commit in the same unit. A
// draft the schema refuses (a type mismatch, addField denied) fails the
// whole commit, unless refused is given: then that draft alone is left
// out and refused is told its index in drafts (independent writes sharing
// one commit, batch.go).
func (s *Service) commit(auth Auth, drafts []*draft, base decideBase, refused func(i int, err error)) error {
	// The classes whose schema this commit may change: their decision is
	// taken under the schema lock, their commit runs after it (a
	// schemaCommit, schema_lock.go).
	var locked []string
	for _, d := range drafts {
		if d.obj != nil && !slices.Contains(locked, d.class) && s.missingFields(d) {
			locked = append(locked, d.class)
		}
	}
	newSchemas, drafts, err := s.decideSchemas(auth, drafts, locked, refused)
	if err != nil {
		if len(locked) > 0 {
			s.schemaMu.Unlock()
		}
		return err
	}
	var pending *schemaCommit
	if len(locked) > 0 {
		if len(newSchemas) > 0 {
			pending = s.beginSchemaCommit(newSchemas)
			defer func() {
				if pending != nil { // a panic in between: never leave the classes in flight
					s.endSchemaCommit(pending, false)
				}
			}()
		}
		s.schemaMu.Unlock()
	}
	records, err := s.commitRecordsOf(newSchemas, drafts)
	if err == nil {
		err = s.commitRecords(records, drafts, base)
	}
	var created []string
	if pending != nil {
		created = s.endSchemaCommit(pending, err == nil)
		pending = nil
	}
	if err != nil {
		if _, ok := schema.AsError(err); ok {
			return err // a unique value taken (decide.go), a value too large
		}
		return fmt.Errorf("commit: %w", err)
	}
	for _, name := range created {
		if s.isSQLClass(name) {
			// Its table is new and empty: indexing it is instant, and the
			// declarations (the indexes option) wait for it.
			if err := s.buildIndexes(name); err != nil {
				s.warn(err.Error())
			}
		}
	}
	for _, d := range drafts {
		if s.isSQLClass(d.class) {
			// Kept out of memory: the store's table is its only copy.
		} else if coll := s.data.Collection(d.class, true); d.obj == nil {
			if s.wantsChanges() || s.logOrder.on.Load() {
				d.originalEnc = coll.KeptEncoding(d.original) // before it goes
			}
			coll.Delete(d.id)
		} else {
			if d.original != nil && (s.wantsChanges() || s.logOrder.on.Load()) {
				d.originalEnc = coll.KeptEncoding(d.original) // before it is replaced
			}
			ensureGeoIndexes(coll, d.fields) // geo queries need an S2 index on GeoPoint/Polygon fields (indexes.go)
			coll.PutEncoded(d.obj, d.enc)
		}
		for _, j := range d.joins {
			s.data.SetRelation(d.class, j.key, d.id, j.relatedID, j.present)
		}
		if d.obj == nil {
			s.forgetOwnedJoins(d)
		}
	}
	for _, d := range drafts {
		if d.class == classRole {
			s.forgetRoles()
			break
		}
	}
	if s.logOrder.on.Load() {
		s.logOrder.noteOwn(s, drafts) // logorder.go: the follower tells these changes in log order
	}
	if s.wantsChanges() {
		// Pushed under the objects' locks, so every consumer's ring keeps
		// commit order per object; each consumer delivers on its own
		// goroutine (announce.go).
		changes := make([]Change, len(drafts))
		for i, d := range drafts {
			changes[i] = Change{Class: d.class, Original: d.original, Object: d.obj, OriginalJSON: d.originalEnc, ObjectJSON: d.enc, RelationsKnown: true}
			for _, j := range d.joins {
				changes[i].Relations = append(changes[i].Relations, RelationEdit{Key: j.key, RelatedID: j.relatedID, Present: j.present})
			}
		}
		s.changes.Push(changes...)
	}
	return nil
}

// encodeStored is the JSON an object is committed and replied with:
// goccy/go-json, which writes the same bytes as encoding/json for the
// values an object holds (sorted keys, the same escaping and numbers:
// TestEncodeStoredMatchesEncodingJSON) about ten times faster and with one
// allocation instead of one per value.
func encodeStored(obj schema.Object) ([]byte, error) {
	return gojson.Marshal(obj)
}

// encode sets d.enc, the JSON d.obj is committed and replied with,
// refusing an object over MaxObjectBytes.
func (d *draft) encode() error {
	b, err := encodeStored(d.obj)
	if err != nil {
		return err
	}
	if len(b) > MaxObjectBytes {
		return schema.Errorf(schema.CodeObjectTooLarge, "object is larger than %d bytes", MaxObjectBytes)
	}
	d.enc = b
	return nil
}

// decideSchemas checks the drafts' fields against their classes' schemas
// (type lock-in, the addField permission) and returns the schemas the
// commit adds fields or classes to, and the drafts that commit: all of
// them, or with refused, those the schema accepts. With locked classes it
// takes the schema lock (lockSchema) and returns holding it, also on
// error: so two writers racing to introduce one field cannot both win.
func (s *Service) decideSchemas(auth Auth, drafts []*draft, locked []string, refused func(int, error)) (map[string]*schema.Class, []*draft, error) {
	if len(locked) > 0 {
		s.lockSchema(locked...)
	}
	newSchemas := map[string]*schema.Class{}
	kept := drafts
	if refused != nil {
		kept = make([]*draft, 0, len(drafts))
	}
	for i, d := range drafts {
		err := s.decideSchema(auth, d, locked, newSchemas)
		if err != nil && refused == nil {
			return nil, nil, err
		}
		if refused != nil {
			if err != nil {
				refused(i, err)
				continue
			}
			kept = append(kept, d)
		}
	}
	return newSchemas, kept, nil
}

// decideSchema checks one draft's fields against its class's schema as
// newSchemas changes it, and adds the fields and class it introduces to
// newSchemas; a draft refused adds nothing.
func (s *Service) decideSchema(auth Auth, d *draft, locked []string, newSchemas map[string]*schema.Class) error {
	if d.obj == nil {
		return nil
	}
	cls := newSchemas[d.class]
	if cls == nil {
		cls = s.Class(d.class)
	}
	existed := cls != nil
	if !existed {
		if !slices.Contains(locked, d.class) {
			return fmt.Errorf("service: class %s appeared without the schema lock", d.class)
		}
		cls = s.newClass(d.class)
	}
	// The fields go to a copy, seen by this draft's later fields (one
	// GeoPoint per class), and replace newSchemas' entry only when the
	// whole draft is accepted.
	owned := !existed
	for key, f := range d.fields {
		add, err := checkType(cls, d.class, key, f)
		if err != nil {
			return err
		}
		if !add {
			continue
		}
		if existed && !auth.Master && !auth.internal && !auth.Maintenance {
			fields, err := s.checkCLP(auth, d.class, opAddField)
			if err != nil {
				return err
			}
			if len(fields) > 0 && (d.original == nil || !pointsToAny(d.original, fields, auth.UserID)) {
				return schema.Errorf(schema.CodeOperationForbidden, "Permission denied for action addField on class %s.", d.class)
			}
		}
		if !slices.Contains(locked, d.class) {
			return fmt.Errorf("service: field %s.%s appeared without the schema lock", d.class, key)
		}
		if !owned {
			cls, owned = cls.Clone(), true
		}
		if len(cls.Fields) >= MaxFieldsPerClass {
			return tooManyFields(d.class)
		}
		cls.Fields[key] = f
	}
	if owned {
		newSchemas[d.class] = cls
	}
	return nil
}

// commitRecordsOf lists the store records of a commit: the changed
// schemas, then each draft's object and relation records.
func (s *Service) commitRecordsOf(newSchemas map[string]*schema.Class, drafts []*draft) ([]store.Record, error) {
	var records []store.Record
	for name, cls := range newSchemas {
		b, err := json.Marshal(cls)
		if err != nil {
			return nil, err
		}
		records = append(records, store.Record{Kind: store.KindSchema, Class: name, Value: b})
	}
	for _, d := range drafts {
		rec := store.Record{Kind: store.KindObject, Class: d.class, Key: d.id}
		if d.obj != nil {
			if d.enc == nil { // not yet encoded (encodeDraft)
				if err := d.encode(); err != nil {
					return nil, err
				}
			}
			rec.Value = d.enc
		}
		if s.isSQLClass(d.class) || s.opts.RecordPrevious {
			prev, err := s.previousRecord(d)
			if err != nil {
				return nil, err
			}
			rec.Previous = prev
		}
		records = append(records, rec)
		for _, j := range d.joins {
			r := store.Record{Kind: store.KindJoin, Class: joinClass(j.key, d.class), Key: joinKey(d.id, j.relatedID)}
			if j.present {
				r.Value = []byte{}
			}
			records = append(records, r)
		}
		if d.obj == nil {
			records = append(records, s.ownedJoinDeletes(d)...)
		}
	}
	return records, nil
}

// missingFields reports whether d introduces a field or class the current
// schema lacks (a cheap pre-check that decides whether to take the lock).
func (s *Service) missingFields(d *draft) bool {
	cls := s.Class(d.class)
	if cls == nil {
		return true
	}
	for k := range d.fields {
		if _, ok := cls.Fields[k]; !ok {
			return true
		}
	}
	return false
}

func (s *Service) relationKeys(class string) []string {
	cls := s.Class(class)
	if cls == nil {
		return nil
	}
	var keys []string
	for k, f := range cls.Fields {
		if f.Type == schema.TypeRelation {
			keys = append(keys, k)
		}
	}
	return keys
}

// ownedJoinDeletes removes a deleted object's own relation memberships.
func (s *Service) ownedJoinDeletes(d *draft) []store.Record {
	var out []store.Record
	for _, key := range s.relationKeys(d.class) {
		s.data.Related(d.class, key, d.id, func(rel string) bool {
			out = append(out, store.Record{Kind: store.KindJoin, Class: joinClass(key, d.class), Key: joinKey(d.id, rel)})
			return true
		})
	}
	return out
}

func (s *Service) forgetOwnedJoins(d *draft) {
	for _, key := range s.relationKeys(d.class) {
		var rels []string
		s.data.Related(d.class, key, d.id, func(rel string) bool { rels = append(rels, rel); return true })
		for _, rel := range rels {
			s.data.SetRelation(d.class, key, d.id, rel, false)
		}
	}
}
