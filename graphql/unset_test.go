package graphql_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestUnsetByNull: a field set to null in update<Class>'s fields is unset,
// whether null is written in the document or sent in the variables (JSON
// null once became an empty map there: "cannot use map as String").
func TestUnsetByNull(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	cases := []struct {
		name  string
		query string
		vars  func(id string) map[string]any
	}{
		{"literal", `mutation($id: ID!) { updatePost(input: {id: $id, fields: {title: null}}) { post { title n } } }`,
			func(id string) map[string]any { return map[string]any{"id": id} }},
		{"fields in a variable", `mutation($id: ID!, $f: UpdatePostFieldsInput) { updatePost(input: {id: $id, fields: $f}) { post { title n } } }`,
			func(id string) map[string]any { return map[string]any{"id": id, "f": map[string]any{"title": nil}} }},
		{"the whole input in a variable", `mutation($in: UpdatePostInput!) { updatePost(input: $in) { post { title n } } }`,
			func(id string) map[string]any {
				return map[string]any{"in": map[string]any{"id": id, "fields": map[string]any{"title": nil}}}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := srv.Do(t, "POST", "/classes/Post", map[string]any{"title": "x", "n": 1}, m).Map()["objectId"].(string)
			r := post(t, srv, m, c.query, c.vars(id))
			if r.status != 200 || r.get("data.updatePost.post").Raw != `{"title":null,"n":1}` {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if stored := srv.Do(t, "GET", "/classes/Post/"+id, nil, m).Map(); stored["title"] != nil || stored["n"] != 1.0 {
				t.Errorf("stored %v", stored)
			}
		})
	}
}
