package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// A user's authData.<provider>.id must belong to one user. The ids live
// inside the user's JSON, under provider names nobody lists in advance,
// so no index on the _User table can hold them: _authIds keeps one row
// per (user, provider) holding an id, written in the transaction of the
// user's row, and a unique index on (provider, id) refuses a second user.
//
// Rows holding one id twice (written before this table existed, or while
// its index was missing) are reported at Open and kept: the index waits
// until an operator resolves them, as for the unique fields (guard.go).

const (
	tableAuthIDs = "_authIds" // provider, id, objectId: every linked provider id of _User
	// authIDsUnique is the unique index on (provider, id).
	authIDsUnique = "_authIds:unique"
	classUser     = "_User"
)

// authIDs are the linked provider ids of a _User object's JSON: provider
// -> id, for each entry with a non-empty string id, as the service links
// users (an entry without one links no one).
func authIDs(value []byte) (providers, ids []string) {
	var obj struct {
		AuthData map[string]json.RawMessage `json:"authData"`
	}
	if json.Unmarshal(value, &obj) != nil {
		return nil, nil // not an object with authData: links no one
	}
	for p, raw := range obj.AuthData {
		var entry struct {
			ID any `json:"id"`
		}
		if json.Unmarshal(raw, &entry) != nil {
			continue
		}
		if id, ok := entry.ID.(string); ok && id != "" {
			// PostgreSQL text holds no NUL (versionKey's escape).
			providers = append(providers, versionKey(p))
			ids = append(ids, versionKey(id))
		}
	}
	return providers, ids
}

// queueAuthIDs queues the writes that make _authIds hold the ids of user
// id's new value (nil: deleted).
func (c *committer) queueAuthIDs(id string, value []byte) {
	c.queued.Queue(`DELETE FROM `+quote(tableAuthIDs)+` WHERE "objectId" = $1`, id)
	providers, ids := authIDs(value)
	if len(ids) == 0 {
		return
	}
	c.queued.Queue(`INSERT INTO `+quote(tableAuthIDs)+` ("provider", "id", "objectId") SELECT p, i, $3 FROM unnest($1::text[], $2::text[]) AS t(p, i)`,
		providers, ids, id)
}

// ensureAuthIDs creates _authIds and its unique index (Open, under the
// commit lock). While the index is missing the table is rebuilt from
// _User, so what Open checks is what the users hold.
func (a *Adapter) ensureAuthIDs(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+quote(tableAuthIDs)+
		` ("objectId" text COLLATE "C" NOT NULL, "provider" text COLLATE "C" NOT NULL, "id" text COLLATE "C" NOT NULL, PRIMARY KEY ("objectId", "provider"))`); err != nil {
		return err
	}
	var indexed bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", quote(authIDsUnique)).Scan(&indexed); err != nil {
		return err
	}
	if indexed {
		return nil
	}
	if err := a.rebuildAuthIDs(ctx, tx); err != nil {
		return fmt.Errorf("%s: %w", tableAuthIDs, err)
	}
	rows, err := tx.Query(ctx, `SELECT "provider", "id", string_agg("objectId", ', ' ORDER BY "objectId") FROM `+quote(tableAuthIDs)+`
		GROUP BY 1, 2 HAVING count(*) > 1 ORDER BY 1, 2 LIMIT 5`)
	if err != nil {
		return err
	}
	var dups []string
	for rows.Next() {
		var provider, id, users string
		if err := rows.Scan(&provider, &id, &users); err != nil {
			rows.Close()
			return err
		}
		dups = append(dups, fmt.Sprintf("authData.%s.id %q in users %s", provider, id, users))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(dups) > 0 {
		a.warnLater(fmt.Sprintf("postgres: _User links one provider id to several users (%s): PostgreSQL cannot enforce that an authData id links one user until they are resolved; no unique index on %s was made",
			strings.Join(dups, "; "), tableAuthIDs))
		return nil
	}
	_, err = tx.Exec(ctx, "CREATE UNIQUE INDEX IF NOT EXISTS "+quote(authIDsUnique)+" ON "+quote(tableAuthIDs)+` ("provider", "id")`)
	return err
}

// rebuildAuthIDs fills _authIds afresh from every _User row.
func (a *Adapter) rebuildAuthIDs(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, "DELETE FROM "+quote(tableAuthIDs)); err != nil {
		return err
	}
	var raw []byte
	err := tx.QueryRow(ctx, `SELECT "schema" FROM `+quote(tableSchema)+` WHERE "className" = $1`, classUser).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // no users yet
	}
	if err != nil {
		return err
	}
	t, err := newTableState(classUser, true, raw)
	if err != nil {
		return err
	}
	lay := t.layout
	rows, err := tx.Query(ctx, "SELECT "+lay.selectList()+" FROM "+quote(lay.table))
	if err != nil {
		return err
	}
	var users, providers, ids []string
	d := lay.decoder()
	for rows.Next() {
		if err := rows.Scan(d.dest...); err != nil {
			rows.Close()
			return err
		}
		b, err := d.object()
		if err != nil {
			rows.Close()
			return err
		}
		ps, is := authIDs(b)
		for i := range ps {
			users = append(users, d.id)
			providers = append(providers, ps[i])
			ids = append(ids, is[i])
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(users) == 0 {
		return nil
	}
	_, err = tx.Exec(ctx, `INSERT INTO `+quote(tableAuthIDs)+` ("objectId", "provider", "id") SELECT * FROM unnest($1::text[], $2::text[], $3::text[])`,
		users, providers, ids)
	return err
}
