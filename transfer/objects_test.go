package transfer

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestIndexesFromMongo(t *testing.T) {
	got := indexesFromMongo(map[string]any{
		"_id_":                  map[string]any{"_id": 1.0},
		"_p_author_1":           map[string]any{"_p_author": 1.0},
		"created":               map[string]any{"_created_at": -1.0},
		"title_text":            map[string]any{"_fts": "text", "_ftsx": 1.0},
		"_email_verify_token_1": map[string]any{"_email_verify_token": 1.0},
		"score_1_author_1":      map[string]any{"score": 1.0, "_p_author": 1.0},
		"not_an_index_spec":     "oops",
		"meta.nested.ok":        map[string]any{"meta.nested": 1.0},
		"broken":                map[string]any{"a..b": 1.0},
	})
	want := map[string]any{
		"_p_author_1":      map[string]any{"author": 1.0},
		"created":          map[string]any{"createdAt": -1.0},
		"score_1_author_1": map[string]any{"score": 1.0, "author": 1.0},
		"meta.nested.ok":   map[string]any{"meta.nested": 1.0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestPlainValueExtendedJSON(t *testing.T) {
	in := map[string]any{
		"d1": map[string]any{"$date": "2020-01-02T03:04:05Z"},
		"d2": map[string]any{"$date": map[string]any{"$numberLong": "1577934245000"}},
		"d3": map[string]any{"$date": 1577934245000.0},
		"n":  []any{map[string]any{"$numberLong": "7"}, map[string]any{"$numberDouble": "2.5"}, map[string]any{"$numberDecimal": "1.10"}},
		"b1": map[string]any{"$binary": map[string]any{"base64": "aGk=", "subType": "00"}},
		"b2": map[string]any{"$binary": "aGk=", "$type": "00"},
		"id": map[string]any{"$oid": "5c7d1e2f3a4b5c6d7e8f9a0b"},
		"o":  map[string]any{"plain": true},
	}
	got, err := plainValue(in)
	if err != nil {
		t.Fatal(err)
	}
	date := map[string]any{"__type": "Date", "iso": "2020-01-02T03:04:05.000Z"}
	bytes := map[string]any{"__type": "Bytes", "base64": "aGk="}
	want := map[string]any{"d1": date, "d2": date, "d3": date, "n": []any{7.0, 2.5, 1.1}, "b1": bytes, "b2": bytes,
		"id": "5c7d1e2f3a4b5c6d7e8f9a0b", "o": map[string]any{"plain": true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if _, err := plainValue(map[string]any{"x": map[string]any{"$numberDouble": "NaN"}}); err == nil {
		t.Errorf("NaN accepted")
	}
}

func TestListCollectionsRefusesAmbiguousDirectories(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dump", "parse"), 0o755)
	os.WriteFile(filepath.Join(dir, "dump", "parse", "Post.bson"), nil, 0o600)
	if _, err := ListCollections(filepath.Join(dir, "dump")); err == nil || !strings.Contains(err.Error(), "use "+filepath.Join(dir, "dump", "parse")) {
		t.Errorf("a mongodump root: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "dump", "parse", "Post.json"), nil, 0o600)
	if _, err := ListCollections(filepath.Join(dir, "dump", "parse")); err == nil || !strings.Contains(err.Error(), "both hold collection Post") {
		t.Errorf("Post.json beside Post.bson: %v", err)
	}
}
