package graphql_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/server/servertest"
)

// postFiles sends a GraphQL multipart request: operations, map, and one
// part per file, each file mapped to the variable path of its key.
func postFiles(t testing.TB, srv *servertest.Server, headers map[string]string, query string, vars map[string]any, files map[string]string) reply {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	ops, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	w.WriteField("operations", string(ops))
	paths := map[string][]string{}
	parts := []string{}
	for path := range files {
		parts = append(parts, path)
		paths[string(rune('0'+len(parts)-1))] = []string{path}
	}
	m, _ := json.Marshal(paths)
	w.WriteField("map", string(m))
	for i, path := range parts {
		h := textproto.MIMEHeader{}
		name := path[strings.LastIndex(path, ".")+1:] + ".txt"
		h.Set("Content-Disposition", `form-data; name="`+string(rune('0'+i))+`"; filename="`+name+`"`)
		h.Set("Content-Type", "text/plain")
		p, _ := w.CreatePart(h)
		io.WriteString(p, files[path])
	}
	w.Close()
	headers = with(headers, "Content-Type", w.FormDataContentType())
	root := strings.TrimSuffix(srv.URL, srv.Opts.MountPath)
	req, _ := http.NewRequest("POST", root+"/graphql", &body)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, b}
}

// TestFileUploads: createFile and a FileInput's upload store files
// through the files service, under the same limits, fileUpload rules and
// triggers as REST, with the same codes and messages.
func TestFileUploads(t *testing.T) {
	reg := cloud.New(nil, 0)
	reg.BeforeSaveFile(func(ctx context.Context, req *cloud.TriggerRequest) error {
		if strings.HasSuffix(req.Object["name"].(string), "refused.txt") {
			return schema.Errorf(schema.CodeScriptFailed, "no refused files")
		}
		return nil
	})
	srv := servertest.StartCloud(t, nil, reg, func(o *config.Options) {
		o.MountGraphQL = true
		o.MaxUploadSize = 1000
	})
	m, app := servertest.Master(), servertest.App()
	srv.Do(t, "POST", "/schemas/Doc", map[string]any{"className": "Doc", "fields": map[string]any{"attachment": map[string]any{"type": "File"}}}, m)
	const createFile = `mutation($file: Upload!) { createFile(input: {upload: $file}) { fileInfo { name url } } }`
	up := postFiles(t, srv, m, createFile, map[string]any{"file": nil}, map[string]string{"variables.file": "hello"})
	name, url := up.get("data.createFile.fileInfo.name").String(), up.get("data.createFile.fileInfo.url").String()
	if !strings.HasSuffix(name, "file.txt") || url == "" {
		t.Fatalf("createFile: %s", up.body)
	}
	if got := download(t, url); got != "hello" {
		t.Errorf("the stored file holds %q", got)
	}
	doc := postFiles(t, srv, m, `mutation($file: Upload) { createDoc(input: {fields: {attachment: {upload: $file}}}) { doc { objectId attachment { name url } } } }`,
		map[string]any{"file": nil}, map[string]string{"variables.file": "attached"})
	if got := download(t, doc.get("data.createDoc.doc.attachment.url").String()); got != "attached" {
		t.Errorf("createDoc with an upload: %s", doc.body)
	}
	// A File already stored links by name, as REST's {"__type": "File"}.
	linked := post(t, srv, m, `mutation($name: File) { createDoc(input: {fields: {attachment: {file: $name}}}) { doc { attachment { name } } } }`,
		map[string]any{"name": name})
	if linked.get("data.createDoc.doc.attachment.name").String() != name {
		t.Errorf("link by name: %s", linked.body)
	}

	big := strings.Repeat("x", 1001)
	refusals := []struct {
		name     string
		headers  map[string]string
		restName string
		data     string
	}{
		{"over maxUploadSize", m, "big.txt", big},
		{"public uploads are off by default", app, "file.txt", "x"},
		{"beforeSaveFile refuses", m, "refused.txt", "x"},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			rest := srv.Do(t, "POST", "/files/"+c.restName, c.data, with(c.headers, "Content-Type", "text/plain"))
			want := gjson.GetBytes(rest.Body, "code").Int()
			// The part's file name is the map path's last key.
			path := "variables." + strings.TrimSuffix(c.restName, ".txt")
			r := postFiles(t, srv, c.headers, `mutation($`+strings.TrimSuffix(c.restName, ".txt")+`: Upload!) { createFile(input: {upload: $`+
				strings.TrimSuffix(c.restName, ".txt")+`}) { fileInfo { name } } }`, map[string]any{}, map[string]string{path: c.data})
			if want == 0 || r.get("errors.0.extensions.code").Int() != want || r.get("errors.0.message").String() != gjson.GetBytes(rest.Body, "error").String() {
				t.Errorf("GraphQL %d %s; REST %d %s", r.status, r.body, rest.Status, rest.Body)
			}
		})
	}
	t.Run("a map naming a missing part", func(t *testing.T) {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField("operations", `{"query":"mutation($f: Upload!) { createFile(input: {upload: $f}) { fileInfo { name } } }","variables":{"f":null}}`)
		w.WriteField("map", `{"0":["variables.f"]}`)
		w.Close()
		r := raw(t, srv, "POST", "/graphql", body.Bytes(), with(m, "Content-Type", w.FormDataContentType()))
		if r.status != http.StatusBadRequest || r.get("errors.0.extensions.code").Int() != 107 {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
}

func download(t testing.TB, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
