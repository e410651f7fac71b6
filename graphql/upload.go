package graphql

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/fileapi"
	"github.com/quarrydata/quarry/schema"
)

// upload is a file of a multipart request, in an Upload position.
type upload struct {
	name, contentType string
	data              []byte
}

// MaxUploadParts bounds the files one multipart request maps.
const MaxUploadParts = 100

// multipartRequest reads a GraphQL multipart request (the spec of
// jaydenseric/graphql-multipart-request-spec, which Apollo and Parse
// Server's clients send): operations is the request, map names for each
// file part the variable paths it fills ("variables.input.upload").
func multipartRequest(ctx *fasthttp.RequestCtx) (request, error) {
	var req request
	form, err := ctx.MultipartForm()
	if err != nil {
		return req, schema.Errorf(schema.CodeInvalidJSON, "The multipart request could not be read.")
	}
	field := func(name string) string {
		if v := form.Value[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	dec := json.NewDecoder(strings.NewReader(field("operations")))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return req, schema.Errorf(schema.CodeInvalidJSON, "The multipart field operations must be a JSON object {query, variables, operationName}.")
	}
	req.Variables, _ = plainNumbers(req.Variables).(map[string]any)
	var paths map[string][]string
	if err := json.Unmarshal([]byte(field("map")), &paths); err != nil {
		return req, schema.Errorf(schema.CodeInvalidJSON, "The multipart field map must be a JSON object of file names to variable paths.")
	}
	if len(paths) > MaxUploadParts {
		return req, schema.Errorf(schema.CodeInvalidJSON, "A multipart request maps %d files at most.", MaxUploadParts)
	}
	for part, targets := range paths {
		files := form.File[part]
		if len(files) == 0 {
			return req, schema.Errorf(schema.CodeInvalidJSON, "The map names file %q, which the request does not hold.", part)
		}
		f, err := files[0].Open()
		if err != nil {
			return req, err
		}
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return req, err
		}
		up := &upload{name: files[0].Filename, contentType: files[0].Header.Get("Content-Type"), data: data}
		for _, path := range targets {
			if err := place(req.Variables, path, up); err != nil {
				return req, err
			}
		}
	}
	return req, nil
}

// place puts an upload at a map path ("variables.a.0.b") of the variables.
func place(vars map[string]any, path string, up *upload) error {
	bad := schema.Errorf(schema.CodeInvalidJSON, "The map path %q does not name a variable.", path)
	keys := strings.Split(path, ".")
	if len(keys) < 2 || keys[0] != "variables" {
		return bad
	}
	var cur any = vars
	for i, k := range keys[1:] {
		last := i == len(keys)-2
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[k] = up
				return nil
			}
			cur = c[k]
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= len(c) {
				return bad
			}
			if last {
				c[n] = up
				return nil
			}
			cur = c[n]
		default:
			return bad
		}
	}
	return bad
}

// isMultipart reports whether a request is a multipart form.
func isMultipart(ctx *fasthttp.RequestCtx) bool {
	return bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("multipart/form-data"))
}

// save stores an upload through the files service, with the same name
// rules, maxUploadSize, fileUpload rules and file triggers as REST.
func (e *executor) save(v any) (fileapi.SavedFile, error) {
	// Variable coercion (reflection) hands the value on dereferenced.
	up, ok := v.(upload)
	if p, isPtr := v.(*upload); isPtr {
		up, ok = *p, true
	}
	if !ok {
		return fileapi.SavedFile{}, schema.Errorf(schema.CodeFileSaveError, "upload must be a file part of a multipart request.")
	}
	fa := e.h.files
	if !fa.FilesEnabled() {
		return fileapi.SavedFile{}, schema.Errorf(schema.CodeFileSaveError, "No files adapter is configured.")
	}
	return fa.SaveFile(e.auth, fileapi.FileUpload{Name: up.name, ContentType: up.contentType, Data: up.data})
}

// createFile resolves the createFile mutation.
func (e *executor) createFile(input map[string]any) (map[string]any, error) {
	saved, err := e.save(input["upload"])
	if err != nil {
		return nil, err
	}
	return map[string]any{"fileInfo": map[string]any{"name": saved.Name, "url": saved.URL}}, nil
}

// fileFieldIn turns a FileInput into a File value, uploading first when
// it carries an upload.
func (e *executor) fileFieldIn(v any) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return fileIn(v), nil
	}
	if up, ok := m["upload"]; ok && up != nil {
		saved, err := e.save(up)
		if err != nil {
			return nil, err
		}
		return map[string]any{"__type": "File", "name": saved.Name, "url": saved.URL}, nil
	}
	if f, ok := m["file"]; ok {
		return fileIn(f), nil
	}
	return nil, schema.Errorf(schema.CodeIncorrectType, "A FileInput needs file or upload.")
}
