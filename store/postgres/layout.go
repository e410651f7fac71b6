package postgres

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quarrydata/quarry/schema"
)

// Reserved columns of every class table. No Parse key can hold a '$', so
// they never meet a field's column.
const (
	colID    = "objectId" // the record's Key
	colExtra = "$extra"   // jsonb: every key without a typed column, or whose value does not fit it
	colRaw   = "$raw"     // bytea: the whole object, when it cannot be stored as jsonb (a \u0000 in it)
	markNoID = "$noId"    // in $extra: the object JSON has no objectId key
)

// maxIdent is PostgreSQL's identifier length (NAMEDATALEN-1); longer names
// would be cut silently, so they are shortened with a hash instead.
const maxIdent = 63

// colKind is how one field's values are kept.
type colKind byte

const (
	kindText    colKind = iota // String
	kindNumber                 // Number
	kindBool                   // Boolean
	kindDate                   // Date: {"__type":"Date","iso":...}
	kindStamp                  // createdAt, updatedAt: a bare timestamp string
	kindPointer                // Pointer: the target's objectId
	kindGeo                    // GeoPoint as geography(Point), with PostGIS
	kindJSON                   // Object, Array, ACL, File, Bytes, and GeoPoint or Polygon without PostGIS
	kindPolygon                // Polygon as geometry(Polygon), with PostGIS (polygon.go)
)

func (k colKind) sqlType() string {
	switch k {
	case kindText, kindPointer:
		return "text"
	case kindNumber:
		return "double precision"
	case kindBool:
		return "boolean"
	case kindDate, kindStamp:
		return "timestamptz"
	case kindGeo:
		return "geography(Point,4326)"
	case kindPolygon:
		return polygonSQLType
	default:
		return "jsonb"
	}
}

// column is one typed field of a class table.
type column struct {
	key    string // the object's key
	name   string // the column's name
	kind   colKind
	target string // a Pointer's class
}

// layout is the shape of one class table, derived from the class's schema
// alone, so every instance derives the same one.
type layout struct {
	class string
	table string
	cols  []column // sorted by key
	// upsertOnce makes upsertSQL once: a layout is shared by the commits
	// that read the same schema (cachedTable).
	upsertOnce sync.Once
	upsertSQL  string
}

// layoutOf derives the table of class from its schema; a nil schema (a
// class with objects but no schema record) gives a table of objectId and
// $extra only.
func layoutOf(class string, c *schema.Class, geo bool) *layout {
	l := &layout{class: class, table: identName(class)}
	if c == nil {
		return l
	}
	for key, f := range c.Fields {
		if key == colID || f.Type == schema.TypeRelation {
			continue
		}
		col := column{key: key, name: identName(key), kind: kindJSON}
		switch {
		case key == "createdAt" || key == "updatedAt":
			col.kind = kindStamp
		case f.Type == schema.TypeString:
			col.kind = kindText
		case f.Type == schema.TypeNumber:
			col.kind = kindNumber
		case f.Type == schema.TypeBoolean:
			col.kind = kindBool
		case f.Type == schema.TypeDate:
			col.kind = kindDate
		case f.Type == schema.TypePointer:
			col.kind, col.target = kindPointer, f.TargetClass
		case f.Type == schema.TypeGeoPoint && geo:
			col.kind = kindGeo
		case f.Type == schema.TypePolygon && geo:
			col.kind = kindPolygon
		}
		l.cols = append(l.cols, col)
	}
	slices.SortFunc(l.cols, func(a, b column) int { return strings.Compare(a.key, b.key) })
	return l
}

// identName is name as an identifier: itself when it fits, else a prefix
// and a hash of the whole (still unique, still recognisable in psql).
func identName(name string) string {
	if len(name) <= maxIdent {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	prefix := name[:maxIdent-17]
	for !utf8Start(prefix, len(prefix)) {
		prefix = prefix[:len(prefix)-1]
	}
	return prefix + "$" + hex.EncodeToString(sum[:8])
}

// utf8Start reports whether s may be cut at i without splitting a rune.
func utf8Start(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// shape is a comment naming the columns' kinds, put in every statement
// that reads or writes the typed columns: pgx caches a statement's
// parameter and result types by its text, and a field dropped and added
// again with another type leaves the text otherwise the same.
func (l *layout) shape() string {
	b := []byte("/* shape ")
	for _, c := range l.cols {
		b = append(b, '0'+byte(c.kind))
	}
	return string(append(b, " */ "...))
}

// selectList is the column list Load reads, in scan order: objectId, each
// column (a GeoPoint as longitude and latitude), $extra, $raw.
func (l *layout) selectList() string {
	var b strings.Builder
	b.WriteString(l.shape())
	b.WriteString(quote(colID))
	for _, c := range l.cols {
		b.WriteString(", ")
		q := quote(c.name)
		switch c.kind {
		case kindGeo:
			fmt.Fprintf(&b, "ST_X(%s::geometry), ST_Y(%[1]s::geometry)", q)
		case kindPolygon:
			b.WriteString(polygonSelect(q))
		default:
			b.WriteString(q)
		}
	}
	b.WriteString(", " + quote(colExtra) + ", " + quote(colRaw))
	return b.String()
}

// upsert is the INSERT ... ON CONFLICT statement writing one object.
func (l *layout) upsert() string {
	l.upsertOnce.Do(func() { l.upsertSQL = l.makeUpsert() })
	return l.upsertSQL
}

func (l *layout) makeUpsert() string {
	names := []string{quote(colID)}
	params := []string{"$1"}
	for _, c := range l.cols {
		names = append(names, quote(c.name))
		p := "$" + strconv.Itoa(len(params)+1)
		if c.kind == kindGeo {
			p += "::geography"
		} else if c.kind == kindPolygon {
			p += "::geometry"
		}
		params = append(params, p)
	}
	names = append(names, quote(colExtra), quote(colRaw))
	params = append(params, "$"+strconv.Itoa(len(params)+1), "$"+strconv.Itoa(len(params)+2))
	var set []string
	for _, n := range names[1:] {
		set = append(set, n+" = EXCLUDED."+n)
	}
	return fmt.Sprintf("%sINSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) DO UPDATE SET %s",
		l.shape(), quote(l.table), strings.Join(names, ", "), strings.Join(params, ", "), quote(colID), strings.Join(set, ", "))
}

// encode splits an object's JSON into the upsert's arguments. A value
// goes to its typed column only when decoding it back gives the same
// value; everything else stays in $extra, so nothing is lost or altered.
func (l *layout) encode(id string, value []byte) ([]any, error) {
	args := make([]any, len(l.cols)+3)
	args[0] = id
	if bytes.Contains(value, []byte(`\u0000`)) {
		// jsonb and text cannot hold NUL: keep the bytes as they are.
		args[len(args)-1] = value
		return args, nil
	}
	var obj map[string]any
	if err := json.Unmarshal(value, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("object %s/%s is not a JSON object", l.class, id)
	}
	if v, ok := obj[colID]; !ok {
		obj[markNoID] = true
	} else if v == id {
		delete(obj, colID)
	}
	for i, c := range l.cols {
		v, ok := obj[c.key]
		if !ok || v == nil {
			continue
		}
		if arg, fits := c.arg(v); fits {
			args[i+1] = arg
			delete(obj, c.key)
		}
	}
	if len(obj) > 0 {
		extra, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		args[len(args)-2] = extra
	}
	return args, nil
}

// arg is v as the column's argument, when the column can keep it exactly.
func (c *column) arg(v any) (any, bool) {
	switch c.kind {
	case kindText:
		s, ok := v.(string)
		return s, ok
	case kindNumber:
		f, ok := v.(float64)
		return f, ok
	case kindBool:
		b, ok := v.(bool)
		return b, ok
	case kindStamp:
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		return exactTime(s)
	case kindDate:
		m, ok := special(v, "Date", 2)
		if !ok {
			return nil, false
		}
		s, _ := m["iso"].(string)
		return exactTime(s)
	case kindPointer:
		m, ok := special(v, "Pointer", 3)
		if !ok || m["className"] != c.target {
			return nil, false
		}
		id, ok := m["objectId"].(string)
		return id, ok
	case kindPolygon:
		return polygonArg(v)
	case kindGeo:
		m, ok := special(v, "GeoPoint", 3)
		if !ok {
			return nil, false
		}
		lat, ok1 := m["latitude"].(float64)
		lng, ok2 := m["longitude"].(float64)
		if !ok1 || !ok2 || math.Abs(lat) > 90 || math.Abs(lng) > 180 {
			return nil, false
		}
		return "SRID=4326;POINT(" + strconv.FormatFloat(lng, 'g', -1, 64) + " " + strconv.FormatFloat(lat, 'g', -1, 64) + ")", true
	default:
		b, err := json.Marshal(v)
		return b, err == nil
	}
}

// special returns v as a {"__type": typ, ...} map of exactly n keys.
func special(v any, typ string, n int) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != n || m["__type"] != typ {
		return nil, false
	}
	return m, true
}

// exactTime parses s when it is in the wire format, which Load writes back.
func exactTime(s string) (any, bool) {
	t, err := time.Parse(schema.TimeLayout, s)
	if err != nil || schema.FormatTime(t) != s {
		return nil, false
	}
	return t, true
}

// decoder rebuilds one object's JSON from a row Load scanned.
type decoder struct {
	l    *layout
	dest []any // scan targets, in selectList order
	id   string
	vals []any // one per dest after the id
}

func (l *layout) decoder() *decoder {
	d := &decoder{l: l}
	d.dest = append(d.dest, &d.id)
	n := 2
	for _, c := range l.cols {
		if c.kind == kindGeo || c.kind == kindPolygon {
			n++ // two values: longitude and latitude, or their arrays
		}
		n++
	}
	d.vals = make([]any, n)
	for i := range d.vals {
		d.dest = append(d.dest, &d.vals[i])
	}
	return d
}

// object is the scanned row's object JSON.
func (d *decoder) object() ([]byte, error) {
	raw := d.vals[len(d.vals)-1]
	if b, ok := raw.([]byte); ok {
		return b, nil
	}
	obj := map[string]any{}
	if extra := d.vals[len(d.vals)-2]; extra != nil {
		m, ok := extra.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("object %s/%s: $extra is not a JSON object", d.l.class, d.id)
		}
		obj = m
	}
	if obj[markNoID] == true {
		delete(obj, markNoID)
	} else if _, ok := obj[colID]; !ok {
		obj[colID] = d.id
	}
	i := 0
	for _, c := range d.l.cols {
		v := d.vals[i]
		i++
		if c.kind == kindGeo {
			lat := d.vals[i]
			i++
			if v != nil && lat != nil {
				obj[c.key] = map[string]any{"__type": "GeoPoint", "longitude": v, "latitude": lat}
			}
			continue
		}
		if c.kind == kindPolygon {
			lngs := d.vals[i]
			i++
			if v != nil {
				coords, err := polygonCoordinates(v, lngs)
				if err != nil {
					return nil, fmt.Errorf("object %s/%s: %s: %w", d.l.class, d.id, c.key, err)
				}
				obj[c.key] = map[string]any{"__type": "Polygon", "coordinates": coords}
			}
			continue
		}
		if v == nil {
			continue
		}
		switch c.kind {
		case kindStamp:
			obj[c.key] = schema.FormatTime(v.(time.Time))
		case kindDate:
			obj[c.key] = map[string]any{"__type": "Date", "iso": schema.FormatTime(v.(time.Time))}
		case kindPointer:
			obj[c.key] = map[string]any{"__type": "Pointer", "className": c.target, "objectId": v}
		default:
			obj[c.key] = v
		}
	}
	return json.Marshal(obj)
}
