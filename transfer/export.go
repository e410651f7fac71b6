package transfer

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// ExportSummary tells what an export wrote.
type ExportSummary struct {
	Objects   map[string]int64 // by class
	Relations int64
	Schemas   int
	Files     []string // written, in order
}

// Export writes everything st holds into dir, one file per class:
//
//   - FormatDashboard: <Class>.json as Parse Dashboard exports a class,
//     {"results": [...]} of objects in REST form, Relation fields shown as
//     {"__type": "Relation", "className": ...}. No password hashes, no
//     relation memberships, no schemas: a view of the data, not a backup.
//   - FormatMongoLines: what mongoexport writes for a Parse Server database
//     on MongoDB, one document per line: <Class>.json, _SCHEMA.json (with
//     CLPs and indexes) and _Join:<key>:<Class>.json. Import reads it back
//     exactly, and mongoimport loads it into MongoDB for Parse Server.
//
// Server settings (store meta records) are not exported.
func Export(st store.Adapter, dir string, format Format) (*ExportSummary, error) {
	if format != FormatDashboard && format != FormatMongoLines {
		return nil, fmt.Errorf("transfer: cannot export as %q (use %s or %s)", format, FormatDashboard, FormatMongoLines)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	classes := map[string]*schema.Class{}
	err := st.Load(func(r store.Record) error {
		if r.Kind != store.KindSchema {
			return nil
		}
		var c schema.Class
		if err := json.Unmarshal(r.Value, &c); err != nil {
			return fmt.Errorf("%w: the schema of class %s is not valid JSON", store.ErrDamaged, r.Class)
		}
		classes[r.Class] = &c
		return nil
	})
	if err != nil {
		return nil, err
	}
	e := &exporter{dir: dir, format: format, classes: classes, sum: &ExportSummary{Objects: map[string]int64{}}}
	if format == FormatMongoLines && len(classes) > 0 {
		if err := e.writeSchemas(); err != nil {
			return nil, err
		}
	}
	err = st.Load(e.record)
	if cerr := e.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return e.sum, nil
}

// exporter streams records, which Load hands over grouped by class, into
// one open file at a time.
type exporter struct {
	dir     string
	format  Format
	classes map[string]*schema.Class
	sum     *ExportSummary

	name  string // collection of the open file
	f     *os.File
	w     *bufio.Writer
	first bool
}

func (e *exporter) record(r store.Record) error {
	switch r.Kind {
	case store.KindJoin:
		if e.format != FormatMongoLines {
			return nil
		}
		owning, related, ok := strings.Cut(r.Key, ":")
		if !ok {
			return fmt.Errorf("%w: malformed relation record %q %q", store.ErrDamaged, r.Class, r.Key)
		}
		e.sum.Relations++
		return e.write(joinPrefix+r.Class, map[string]any{"owningId": owning, "relatedId": related})
	case store.KindObject:
		var obj schema.Object
		if err := json.Unmarshal(r.Value, &obj); err != nil {
			return fmt.Errorf("%w: object %s/%s is not valid JSON", store.ErrDamaged, r.Class, r.Key)
		}
		e.sum.Objects[r.Class]++
		if e.format == FormatMongoLines {
			return e.write(r.Class, objectToMongo(r.Class, obj))
		}
		return e.write(r.Class, e.restObject(r.Class, obj))
	}
	return nil
}

// restObject is obj as a REST reply shows it to the master key.
func (e *exporter) restObject(class string, obj schema.Object) schema.Object {
	for k := range obj {
		if strings.HasPrefix(k, "_") {
			delete(obj, k)
		}
	}
	if c := e.classes[class]; c != nil {
		for k, f := range c.Fields {
			if f.Type == schema.TypeRelation {
				obj[k] = map[string]any{"__type": "Relation", "className": f.TargetClass}
			}
		}
	}
	return obj
}

func (e *exporter) writeSchemas() error {
	for _, c := range e.classes {
		if err := e.write(schemaColl, classToMongo(c)); err != nil {
			return err
		}
		e.sum.Schemas++
	}
	return e.close()
}

// write appends one document to the collection's file, opening it (and
// closing the previous one) when the collection changes.
func (e *exporter) write(collection string, doc any) error {
	if collection != e.name || e.f == nil {
		if err := e.close(); err != nil {
			return err
		}
		if strings.ContainsAny(collection, `/\`) || collection == "" {
			return fmt.Errorf("transfer: class name %q cannot name a file", collection)
		}
		path := filepath.Join(e.dir, collection+".json")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		e.name, e.f, e.w, e.first = collection, f, bufio.NewWriterSize(f, 1<<20), true
		e.sum.Files = append(e.sum.Files, path)
		if e.format == FormatDashboard {
			e.w.WriteString(`{"results":[` + "\n")
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if e.format == FormatDashboard && !e.first {
		e.w.WriteString(",\n")
	}
	e.first = false
	e.w.Write(b)
	if e.format == FormatMongoLines {
		e.w.WriteByte('\n')
	}
	return nil
}

func (e *exporter) close() error {
	if e.f == nil {
		return nil
	}
	if e.format == FormatDashboard {
		e.w.WriteString("\n]}\n")
	}
	err := e.w.Flush()
	if err == nil {
		err = e.f.Sync()
	}
	err = errors.Join(err, e.f.Close())
	e.f, e.w, e.name = nil, nil, ""
	return err
}
