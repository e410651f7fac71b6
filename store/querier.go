package store

import "context"

// Querier is implemented by adapters that can answer a query themselves
// (PostgreSQL), for classes kept out of memory: their objects are neither
// loaded at start-up nor handed to Follow, and every read of them is a
// query the adapter runs. The query's text is built by planner/sqlplan
// from a Table this adapter describes; values travel only as Args.
type Querier interface {
	// KeepOut names the classes whose objects Load must not hand over.
	// Call it before Load.
	KeepOut(classes []string)
	// Table describes how class's objects are stored, from the schema
	// this instance holds; ok is false for a class it knows no schema of
	// (which holds no object either).
	Table(class string) (t Table, ok bool)
	// Select calls fn with each object q selects, in q's order.
	Select(ctx context.Context, class string, q Select, fn func(id string, object []byte) error) error
	// Count is the number of objects q.Where selects (Order, Limit and
	// Offset are ignored).
	Count(ctx context.Context, class string, q Select) (int, error)
	// Explain is the database's own estimate of the rows q reads from
	// class's table: a sequential scan reads them all, an index scan
	// those of its index condition.
	Explain(ctx context.Context, class string, q Select) (rows float64, seqScan bool, err error)
	// EnsureIndexes creates the database indexes that serve constraints
	// and orders on these keys of class (typed columns only; others are
	// skipped).
	EnsureIndexes(ctx context.Context, class string, keys []string) error
	// Sizes estimates the objects of every class table (PostgreSQL's
	// statistics: cheap, and approximate).
	Sizes(ctx context.Context) (map[string]float64, error)
}

// Table is a class table as a query sees it.
type Table struct {
	// Columns are the typed columns, by the object key they hold. A key
	// without one (or a value that does not fit its column) is kept in the
	// Extra column under its own name.
	Columns map[string]Column
	// ID and Extra name the objectId column and the jsonb column of the
	// keys without a typed column; Raw the bytea column of an object kept
	// whole (one PostgreSQL cannot hold as text: a \u0000), whose fields
	// no other column shows.
	ID, Extra, Raw string
}

// Column is one typed column.
type Column struct {
	Name   string // its identifier (unquoted)
	Kind   ColumnKind
	Target string // a Pointer column's class
}

// ColumnKind is how a column keeps its key's values.
type ColumnKind byte

// The column kinds.
const (
	ColumnText     ColumnKind = iota + 1 // String: text
	ColumnNumber                         // Number: double precision
	ColumnBoolean                        // Boolean: boolean
	ColumnDate                           // Date: timestamptz of {"__type":"Date","iso"}
	ColumnStamp                          // createdAt, updatedAt: timestamptz of the bare string
	ColumnPointer                        // Pointer: text, the target's objectId
	ColumnGeoPoint                       // GeoPoint: geography(Point,4326)
	ColumnJSON                           // any other type: jsonb of the REST value
	ColumnPolygon                        // Polygon: geometry(Polygon,4326)
)

// Select is one query on a class table: a boolean SQL expression over its
// columns with $1... placeholders bound to Args, an ORDER BY list whose
// placeholders follow on and are bound to OrderArgs, and a page (Limit <
// 0: no limit).
type Select struct {
	Where     string
	Args      []any
	OrderBy   string
	OrderArgs []any
	Limit     int
	Offset    int
	// Batch > 0 reads the rows through a cursor, Batch (then growing)
	// at a time, planned for the first rows: for a caller that stops
	// early without knowing after how many rows (a page decided in Go),
	// what it does not read is never produced nor sent.
	Batch int
}
