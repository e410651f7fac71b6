package transfer

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// prepared is one source document as a worker left it: everything that
// needs no shared state done (decoding, conversion, encoding).
type prepared struct {
	skip  string // why the document is not imported; "" when it is
	fatal error  // why the import cannot go on (a malformed CLP)
	// replacedCLP: the dump's CLP of a master-only class was replaced.
	replacedCLP bool
	class       *schema.Class // a _SCHEMA document's class
	join        store.Record  // a relation member
	conv        converted     // an object
	id          string
	badID       string // why id cannot be an objectId: the document is rejected
	value       []byte // conv.obj as stored
}

// addAll converts raws on one goroutine per processor, then merges the
// results into b in source order: summary counts, inferred schema fields
// and records change only here, on the calling goroutine.
// first is the number of raws[0] in the collection (from 1), for reports.
func (im *importer) addAll(b *batch, c Collection, r documents, raws [][]byte, first int64) error {
	if len(raws) == 0 {
		return nil
	}
	var cls *schema.Class
	_, isJoin := c.joinOf()
	if !c.isSchema() && !isJoin && validClass(c.Name) {
		if _, known := im.cp.Schemas[c.Name]; !known {
			b.classes[c.Name] = true
		}
		cls = im.class(c.Name) // read-only while the workers run
	}
	out := make([]prepared, len(raws))
	workers := min(runtime.GOMAXPROCS(0), len(raws))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(raws); i += workers {
				out[i] = prepare(c, r, cls, raws[i])
			}
		}()
	}
	wg.Wait()
	for i := range out {
		if err := im.merge(b, c, cls, &out[i], first+int64(i)); err != nil {
			return err
		}
	}
	return nil
}

func validClass(name string) bool {
	return schema.ValidClassName(name) || strings.HasPrefix(name, "_") && schema.IsName(name[1:], false)
}

// prepare decodes and converts one document. It only reads cls.
func prepare(c Collection, r documents, cls *schema.Class, raw []byte) prepared {
	doc, err := r.Decode(raw)
	if err != nil {
		return prepared{skip: err.Error()}
	}
	if c.isSchema() {
		parse := classFromMongo
		if r.Format() == FormatPostgres {
			parse = classFromPostgres
		}
		class, err := parse(doc)
		if errors.Is(err, ErrBadCLP) {
			return prepared{fatal: err}
		}
		if err != nil {
			return prepared{skip: err.Error()}
		}
		// Parse Server stores only the fields a built-in class adds to
		// its defaults (a _Role's users and roles relations are implied).
		for k, f := range schema.BuiltinFields(class.Name) {
			if _, declared := class.Fields[k]; !declared {
				class.Fields[k] = f
			}
		}
		replaced, err := fixCLP(class)
		if err != nil {
			return prepared{fatal: err}
		}
		return prepared{class: class, replacedCLP: replaced}
	}
	if join, ok := c.joinOf(); ok {
		owning, _ := doc["owningId"].(string)
		related, _ := doc["relatedId"].(string)
		if owning == "" || related == "" {
			return prepared{skip: "a relation document needs owningId and relatedId"}
		}
		if checkObjectID(owning) != "" || checkObjectID(related) != "" {
			return prepared{skip: "owningId or relatedId is not an objectId"}
		}
		return prepared{join: store.Record{Kind: store.KindJoin, Class: join, Key: owning + ":" + related, Value: []byte{}}}
	}
	if cls == nil {
		return prepared{skip: "not a valid class name"}
	}
	var conv converted
	switch r.Format() {
	case FormatDashboard:
		conv, err = objectFromREST(c.Name, doc)
	case FormatPostgres:
		conv, err = objectFromPostgres(c.Name, doc, cls)
	default:
		conv, err = objectFromMongo(c.Name, doc, cls)
	}
	if err != nil {
		return prepared{skip: err.Error()}
	}
	p := prepared{conv: conv}
	p.id, _ = conv.obj["objectId"].(string)
	if p.id == "" {
		return prepared{skip: "no objectId"}
	}
	if why := checkObjectID(p.id); why != "" {
		return prepared{id: p.id, badID: why}
	}
	if p.value, err = json.Marshal(conv.obj); err != nil {
		return prepared{skip: err.Error()}
	}
	return p
}

// merge adds one prepared document, number n of its collection, to b.
func (im *importer) merge(b *batch, c Collection, cls *schema.Class, p *prepared, n int64) error {
	sum := im.cp.Summary
	switch {
	case p.fatal != nil:
		return p.fatal
	case p.skip != "":
		sum.Skipped[c.Name+": "+p.skip]++
	case p.badID != "":
		im.reject(c.Name, n, p.id, p.badID)
	case p.class != nil:
		im.cp.Schemas[p.class.Name] = p.class
		b.classes[p.class.Name] = true
		if p.replacedCLP {
			sum.Dropped[p.class.Name+".CLP: a master-only built-in class keeps its own permissions"]++
		}
	case p.join.Class != "":
		b.put(p.join)
		sum.Relations++
	case im.seen.repeats(p.id, p.value):
		// A MongoDB collection cannot hold two documents with one _id:
		// the dump was edited or concatenated. Which copy is right is
		// unknowable: the first is kept, each other one reported.
		im.reject(c.Name, n, p.id, "objectId repeats an earlier document's (the first is kept)")
	default:
		for _, d := range p.conv.dropped {
			sum.Dropped[c.Name+"."+d]++
		}
		for field, target := range p.conv.relations {
			if _, known := cls.Fields[field]; !known {
				cls.Fields[field] = schema.Field{Type: schema.TypeRelation, TargetClass: target}
				b.classes[cls.Name] = true
			}
		}
		if im.infer(cls, p.conv.obj) {
			b.classes[cls.Name] = true
		}
		b.putObject(c.Name, p.id, p.value)
		if p.conv.session != nil {
			im.addSession(b, p.conv)
		}
	}
	return nil
}

// addSession stores the _Session made from a legacy _User._session_token.
func (im *importer) addSession(b *batch, user converted) {
	s := user.session
	id := sessionID(s["sessionToken"].(string))
	s["objectId"] = id
	s["createdAt"], s["updatedAt"] = user.obj["createdAt"], user.obj["updatedAt"]
	if _, known := im.cp.Schemas["_Session"]; !known {
		b.classes["_Session"] = true
	}
	if im.infer(im.class("_Session"), s) {
		b.classes["_Session"] = true
	}
	v, err := json.Marshal(s)
	if err != nil {
		return
	}
	b.putObject("_Session", id, v)
	im.cp.Summary.Sessions++
}
