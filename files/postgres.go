package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// filesTable names each stored file's large object and description.
const filesTable = `"_Files"`

// Postgres keeps each file as a PostgreSQL large object, named in the
// table "_Files" (name, oid, info): the adapter for deployments whose one
// shared storage is the database, such as several instances on
// PostgreSQL. A file and its row are written in one transaction, so a
// failed upload leaves neither behind, and a replaced file's old object
// is unlinked in the same transaction.
type Postgres struct {
	pool *pgxpool.Pool
}

// NewPostgres connects to the database of uri and makes the table.
func NewPostgres(ctx context.Context, uri string) (*Postgres, error) {
	pool, err := pgxpool.New(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("files: postgres: %w", err)
	}
	// Instances starting together on an empty database would race to
	// create the table (CREATE TABLE IF NOT EXISTS is not safe against a
	// concurrent one): the set-up lock makes them take turns.
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", setupLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+filesTable+
			` (name text PRIMARY KEY, oid oid NOT NULL, info jsonb NOT NULL)`)
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("files: postgres: %w", err)
	}
	return &Postgres{pool: pool}, nil
}

// setupLock is the advisory lock held while the table is made.
const setupLock int64 = 0x5175_6172_7279_46 // "QuarryF"

// Close releases the connections.
func (p *Postgres) Close() { p.pool.Close() }

// Create implements Adapter.
func (p *Postgres) Create(ctx context.Context, name string, r io.Reader, size int64, info Info) error {
	if err := ValidName(name); err != nil {
		return err
	}
	info.Name, info.Size = "", size
	desc, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		objects := tx.LargeObjects()
		oid, err := objects.Create(ctx, 0)
		if err != nil {
			return fmt.Errorf("files: postgres: %w", err)
		}
		obj, err := objects.Open(ctx, oid, pgx.LargeObjectModeWrite)
		if err != nil {
			return fmt.Errorf("files: postgres: %w", err)
		}
		n, err := io.Copy(obj, io.LimitReader(r, size))
		if err != nil {
			return fmt.Errorf("files: postgres: writing %s: %w", name, err)
		}
		if n != size {
			return fmt.Errorf("files: postgres: %s: got %d bytes, want %d", name, n, size)
		}
		if err := obj.Close(); err != nil {
			return fmt.Errorf("files: postgres: %w", err)
		}
		var old uint32
		err = tx.QueryRow(ctx, `SELECT oid FROM `+filesTable+` WHERE name = $1 FOR UPDATE`, name).Scan(&old)
		switch {
		case err == nil:
			if err := objects.Unlink(ctx, old); err != nil {
				return fmt.Errorf("files: postgres: %w", err)
			}
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("files: postgres: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO `+filesTable+` (name, oid, info) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO UPDATE SET oid = EXCLUDED.oid, info = EXCLUDED.info`, name, oid, desc)
		if err != nil {
			return fmt.Errorf("files: postgres: %w", err)
		}
		return nil
	})
}

// Open implements Adapter. The file is read inside a read-only
// transaction that Close ends, so it stays whole while it is streamed even
// if another request replaces or deletes it meanwhile.
func (p *Postgres) Open(ctx context.Context, name string) (ReadSeekCloser, Info, error) {
	if ValidName(name) != nil {
		return nil, Info{}, ErrNotFound
	}
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return nil, Info{}, fmt.Errorf("files: postgres: %w", err)
	}
	var oid uint32
	var desc []byte
	err = tx.QueryRow(ctx, `SELECT oid, info FROM `+filesTable+` WHERE name = $1`, name).Scan(&oid, &desc)
	if err != nil {
		tx.Rollback(ctx)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, Info{}, ErrNotFound
		}
		return nil, Info{}, fmt.Errorf("files: postgres: %w", err)
	}
	var info Info
	if err := json.Unmarshal(desc, &info); err != nil {
		tx.Rollback(ctx)
		return nil, Info{}, fmt.Errorf("files: postgres: the description of %s: %w", name, err)
	}
	info.Name = name
	info.ContentType = ContentType(name, info.ContentType)
	objects := tx.LargeObjects()
	obj, err := objects.Open(ctx, oid, pgx.LargeObjectModeRead)
	if err != nil {
		tx.Rollback(ctx)
		return nil, Info{}, fmt.Errorf("files: postgres: %w", err)
	}
	return &largeObjectReader{LargeObject: obj, tx: tx, ctx: ctx}, info, nil
}

// largeObjectReader is an open large object and the transaction it lives
// in.
type largeObjectReader struct {
	*pgx.LargeObject
	tx  pgx.Tx
	ctx context.Context
}

// Close ends the read and its transaction.
func (r *largeObjectReader) Close() error {
	err := r.LargeObject.Close()
	if rerr := r.tx.Rollback(r.ctx); err == nil && rerr != nil && !errors.Is(rerr, pgx.ErrTxClosed) {
		err = rerr
	}
	return err
}

// Delete implements Adapter.
func (p *Postgres) Delete(ctx context.Context, name string) error {
	if ValidName(name) != nil {
		return ErrNotFound
	}
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var oid uint32
		err := tx.QueryRow(ctx, `DELETE FROM `+filesTable+` WHERE name = $1 RETURNING oid`, name).Scan(&oid)
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("files: postgres: %w", err)
		}
		objects := tx.LargeObjects()
		if err := objects.Unlink(ctx, oid); err != nil {
			return fmt.Errorf("files: postgres: %w", err)
		}
		return nil
	})
}
