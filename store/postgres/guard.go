package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/quarrydata/quarry/store"
)

// A write is decided on this instance's memory; several instances share
// the database, so under the commit lock each guarded Commit checks that
// nothing it was decided on changed since that memory was current.
// _versions keeps, per guard key (an object or a unique value), the last
// change that wrote it and the Adapter that made that change:
//
//   - written by another Adapter after the guard's base: the writer's
//     copy was stale, and its Commit fails with a *store.StaleError;
//   - written by this Adapter: memory applied that commit under the
//     key's lock before releasing it, and that commit was itself checked,
//     so memory is current whatever the base.
//
// Every object record counts as a write of its key, guarded or not, so a
// plain Commit is seen by the guarded ones of other instances.

// CommitGuarded implements store.Guarded.
func (a *Adapter) CommitGuarded(records []store.Record, guards []store.Guard) error {
	return a.commit(records, guards)
}

// Applied implements store.Guarded: how far the follower has handed
// commits over (applied.go), which is how far memory holds them.
func (a *Adapter) Applied() int64 {
	a.applied.mu.Lock()
	defer a.applied.mu.Unlock()
	return a.applied.pos
}

// Head (store.Guarded) and WaitApplied (store.Guarded) are applied.go's:
// one coalesced read of the head of _changes, and a wait for the follower.

// version is a guard key's row of _versions.
type version struct {
	id     int64
	origin string
}

// guardKeys are the keys of every guard in batch, as _versions keeps them.
func guardKeys(batch []*pending) []string {
	var keys []string
	for _, p := range batch {
		for _, g := range p.guards {
			keys = append(keys, versionKey(g.Key))
		}
	}
	return keys
}

// versionKey is key as a text value: PostgreSQL text holds no NUL. Two
// keys made one by this only make a write be decided again needlessly.
func versionKey(key string) string { return strings.ReplaceAll(key, "\x00", "\\0") }

// staleness is p's *store.StaleError, nil when every guard holds and no
// key it writes is locked by another instance's LockKeys (serialize.go).
func (c *committer) staleness(p *pending) error {
	var through int64
	var keys []string
	for _, g := range p.guards {
		v, ok := c.versions[versionKey(g.Key)]
		if ok && v.origin != c.a.origin && v.id > g.Base {
			through = max(through, v.id)
			keys = append(keys, g.Key)
		}
	}
	if len(c.contended) > 0 && len(p.guards) > 0 {
		for _, k := range writtenKeys(p) {
			if c.contended[keyLock(k)] {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &store.StaleError{Through: through, Keys: keys}
}

// writtenKeys are the guard keys p's commit writes: its guards' and its
// objects'.
func writtenKeys(p *pending) []string {
	keys := make([]string, 0, len(p.guards)+len(p.records))
	seen := map[string]bool{}
	add := func(k string) {
		if k = versionKey(k); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, g := range p.guards {
		add(g.Key)
	}
	for _, r := range p.records {
		if r.Kind == store.KindObject {
			add(store.ObjectKey(r.Class, r.Key))
		}
	}
	return keys
}

// queueVersions records, after p's _changes row, that its change wrote
// keys (lastval() is that row's id).
func (c *committer) queueVersions(keys []string) {
	if len(keys) == 0 {
		return
	}
	c.queued.Queue(`INSERT INTO `+quote(tableVersions)+` ("key", "id", "origin") SELECT k, lastval(), $2 FROM unnest($1::text[]) AS k
		ON CONFLICT ("key") DO UPDATE SET "id" = EXCLUDED."id", "origin" = EXCLUDED."origin"`, keys, c.a.origin)
}

// uniqueRule is a field PostgreSQL keeps unique with a unique index, as
// Parse does: lower-cased when Parse compares it case-insensitively.
type uniqueRule struct {
	class, field string
	lower        bool
}

// uniqueRules are Parse's unique fields. (authData ids have a table of
// their own, authids.go; device tokens are not unique in Parse, whose
// installation rules keep one token in several installations in some
// cases: guards alone make concurrent saves take turns on them.)
var uniqueRules = []uniqueRule{
	{"_User", "username", true},
	{"_User", "email", true},
	{"_Role", "name", false},
	{"_Installation", "installationId", false},
}

// index names the rule's unique index on table.
func (r uniqueRule) index(table string) string { return identName(table + ":" + r.field + ":unique") }

// expr is the indexed expression on column col.
func (r uniqueRule) expr(col string) string {
	if r.lower {
		return "lower(" + quote(col) + ")"
	}
	return quote(col)
}

// column is the rule's text column in l, if it has one.
func (r uniqueRule) column(l *layout) (string, bool) {
	if l.class != r.class {
		return "", false
	}
	for _, c := range l.cols {
		if c.key == r.field && c.kind == kindText {
			return c.name, true
		}
	}
	return "", false
}

// uniqueRuleOf is the rule whose index is named constraint.
func uniqueRuleOf(constraint string) (uniqueRule, bool) {
	for _, r := range uniqueRules {
		if r.index(identName(r.class)) == constraint {
			return r, true
		}
	}
	return uniqueRule{}, false
}

// asUnique turns PostgreSQL's unique violation of a rule's index into a
// *store.UniqueError; other errors are returned as they are.
func asUnique(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return err
	}
	if r, ok := uniqueRuleOf(pe.ConstraintName); ok {
		return &store.UniqueError{Class: r.class, Field: r.field}
	}
	if pe.ConstraintName == authIDsUnique {
		return &store.UniqueError{Class: classUser, Field: "authData"}
	}
	return err
}

// execer is a transaction or a connection inside one.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// ensureUnique creates the unique indexes of l's rules that are missing.
// Rows already holding one value twice (written before the index existed)
// are reported, not merged: the index waits until an operator resolves
// them, and the report says which values.
func (a *Adapter) ensureUnique(ctx context.Context, db execer, l *layout) error {
	for _, r := range uniqueRules {
		col, ok := r.column(l)
		if !ok {
			continue
		}
		rows, err := db.Query(ctx, "SELECT "+r.expr(col)+" FROM "+quote(l.table)+" WHERE "+quote(col)+" IS NOT NULL AND to_regclass($1) IS NULL GROUP BY 1 HAVING count(*) > 1 LIMIT 5",
			quote(r.index(l.table)))
		if err != nil {
			return err
		}
		dups, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(dups) > 0 {
			a.warnLater(fmt.Sprintf("postgres: %s holds one %s in several objects (%s): PostgreSQL cannot enforce its uniqueness until they are resolved; no unique index on %s.%s was made",
				r.class, r.field, strings.Join(quoteAll(dups), ", "), r.class, r.field))
			continue
		}
		if _, err := db.Exec(ctx, "CREATE UNIQUE INDEX IF NOT EXISTS "+quote(r.index(l.table))+" ON "+quote(l.table)+" ("+r.expr(col)+")"); err != nil {
			return err
		}
	}
	return nil
}

func quoteAll(values []string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}

// ensureUniqueIndexes runs ensureUnique on every class with a rule whose
// table exists (Open, under the commit lock).
func (a *Adapter) ensureUniqueIndexes(ctx context.Context, tx pgx.Tx) error {
	seen := map[string]bool{}
	for _, r := range uniqueRules {
		if seen[r.class] {
			continue
		}
		seen[r.class] = true
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT "schema" FROM `+quote(tableSchema)+` WHERE "className" = $1`, r.class).Scan(&raw)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		t, err := newTableState(r.class, true, raw)
		if err != nil {
			return err
		}
		if err := a.ensureUnique(ctx, tx, t.layout); err != nil {
			return fmt.Errorf("unique indexes of %s: %w", r.class, err)
		}
	}
	return nil
}

// hasUniqueRule reports whether class has a unique field.
func hasUniqueRule(class string) bool {
	for _, r := range uniqueRules {
		if r.class == class {
			return true
		}
	}
	return false
}

// warnLater logs msg now, or when a logger is set (Open runs before
// SetLogf can), and keeps it for Warnings.
func (a *Adapter) warnLater(msg string) {
	a.mu.Lock()
	a.warnings = append(a.warnings, msg)
	logf := a.opts.Logf
	a.mu.Unlock()
	if logf != nil {
		logf("%s", msg)
	}
}

// Warnings are the problems Open found in the data (duplicate values of
// unique fields), for a start-up report.
func (a *Adapter) Warnings() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.warnings...)
}

var _ store.Guarded = (*Adapter)(nil)
