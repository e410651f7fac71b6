package transfer_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/quarrydata/quarry/transfer"
)

// mongodump writes what mongoexport would, as BSON: a dump of the fixture
// collections (Post gzipped, as mongodump --gzip writes it).
func mongodump(t *testing.T, from, to string) {
	t.Helper()
	cols, err := transfer.ListCollections(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		data, err := os.ReadFile(c.Path)
		if err != nil {
			t.Fatal(err)
		}
		var docs []json.RawMessage
		if trimmed := bytes.TrimSpace(data); trimmed[0] == '[' {
			if err := json.Unmarshal(trimmed, &docs); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, line := range strings.Split(string(trimmed), "\n") {
				docs = append(docs, json.RawMessage(line))
			}
		}
		var out bytes.Buffer
		for _, raw := range docs {
			var d bson.D
			if err := bson.UnmarshalExtJSON(raw, false, &d); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			b, err := bson.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
		}
		name := filepath.Join(to, c.Name+".bson")
		if c.Name == "Post" {
			var gz bytes.Buffer
			w := gzip.NewWriter(&gz)
			w.Write(out.Bytes())
			w.Close()
			out, name = gz, name+".gz"
		}
		if err := os.WriteFile(name, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		meta := `{"indexes":[{"v":2,"key":{"_id":1},"name":"_id_"}],"collectionName":"` + c.Name + `"}`
		if err := os.WriteFile(filepath.Join(to, c.Name+".metadata.json"), []byte(meta), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestImportMongodumpBSON: a mongodump of the fixtures imports into the
// same records as their mongoexport JSON.
func TestImportMongodumpBSON(t *testing.T) {
	dump := t.TempDir()
	mongodump(t, "testdata/mongoexport", dump)
	fromJSON, jsonSum := importInto(t, "testdata/mongoexport", transfer.ImportOptions{})
	fromBSON, bsonSum := importInto(t, dump, transfer.ImportOptions{})
	if bsonSum.Total() != jsonSum.Total() || bsonSum.Relations != jsonSum.Relations || len(bsonSum.Skipped) != len(jsonSum.Skipped) {
		t.Errorf("BSON import %+v, JSON import %+v", bsonSum, jsonSum)
	}
	diffRecords(t, records(t, fromJSON), records(t, fromBSON))
}
