package transfer

import (
	"encoding/json"
	"runtime"
	"strings"
	"sync"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// prepared is one source document as a worker left it: everything that
// needs no shared state done (decoding, conversion, encoding).
type prepared struct {
	skip  string        // why the document is not imported; "" when it is
	class *schema.Class // a _SCHEMA document's class
	join  store.Record  // a relation member
	conv  converted     // an object
	id    string
	value []byte // conv.obj as stored
}

// addAll converts raws on one goroutine per processor, then merges the
// results into b in source order: summary counts, inferred schema fields
// and records change only here, on the calling goroutine.
func (im *importer) addAll(b *batch, c Collection, r documents, raws [][]byte) {
	if len(raws) == 0 {
		return
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
		im.merge(b, c, cls, &out[i])
	}
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
		return prepared{class: class}
	}
	if join, ok := c.joinOf(); ok {
		owning, _ := doc["owningId"].(string)
		related, _ := doc["relatedId"].(string)
		if owning == "" || related == "" {
			return prepared{skip: "a relation document needs owningId and relatedId"}
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
	if p.value, err = json.Marshal(conv.obj); err != nil {
		return prepared{skip: err.Error()}
	}
	return p
}

// merge adds one prepared document to b.
func (im *importer) merge(b *batch, c Collection, cls *schema.Class, p *prepared) {
	sum := im.cp.Summary
	switch {
	case p.skip != "":
		sum.Skipped[c.Name+": "+p.skip]++
	case p.class != nil:
		im.cp.Schemas[p.class.Name] = p.class
		b.classes[p.class.Name] = true
	case p.join.Class != "":
		b.put(p.join)
		sum.Relations++
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
