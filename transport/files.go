package transport

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/fileapi"
	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/schema"
)

// serveFiles answers the files API below {mount}/files, which reads its
// own bodies (raw bytes, or the JS SDK's JSON with base64) before any JSON
// envelope: POST /files/<name>, DELETE /files/<name>, and the public
// GET /files/<appId>/<name> and GET /files/<appId>/metadata/<name>. It
// reports false for other paths, and when no files adapter is configured
// (the not-built answer then applies).
func (s *Server) serveFiles(ctx *fasthttp.RequestCtx, path string) bool {
	rel, ok := strings.CutPrefix(path, s.mount.files)
	if !ok || rel != "" && rel[0] != '/' || !s.files.FilesEnabled() {
		return false
	}
	rel = strings.TrimPrefix(rel, "/")
	segs := strings.Split(rel, "/")
	switch method := string(ctx.Method()); {
	case (method == "GET" || method == "HEAD") && len(segs) == 2:
		s.downloadFile(ctx, segs[0], segs[1])
	case method == "GET" && len(segs) == 3 && segs[1] == "metadata":
		s.fileMetadata(ctx, segs[0], segs[2])
	case method == "POST":
		s.uploadFile(ctx, rel)
	case method == "DELETE":
		s.deleteFile(ctx, rel)
	default:
		s.writeFileError(ctx, fasthttp.StatusNotFound, schema.CodeCommandUnavailable,
			fmt.Sprintf("Quarry has no route %s %s.", method, path))
	}
	return true
}

// uploadFile stores a file and answers 201 with its name and url.
func (s *Server) uploadFile(ctx *fasthttp.RequestCtx, name string) {
	if len(ctx.PostBody()) > s.opts.MaxBodyBytes {
		ctx.SetUserValue(codeKey, schema.CodeFileTooLarge)
		writeJSON(ctx, fasthttp.StatusRequestEntityTooLarge, map[string]any{"code": schema.CodeFileTooLarge,
			"error": fmt.Sprintf("The file is larger than maxUploadSize (%d bytes).", s.opts.MaxBodyBytes)})
		return
	}
	c, up, err := s.fileUpload(ctx)
	if err == nil {
		c.auth, err = s.svc.Authenticate(c.auth)
	}
	var saved fileapi.SavedFile
	if err == nil {
		up.Name = name
		saved, err = s.files.SaveFile(c.auth, up)
	}
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	ctx.Response.Header.Set("Location", saved.URL)
	writeJSON(ctx, fasthttp.StatusCreated, saved)
}

// fileUpload reads an upload's credentials and contents. With the
// application id in a header (or basic auth) the body is the file, typed
// by Content-Type; otherwise it is the JS SDK's JSON: credentials, base64,
// _ContentType and fileData {metadata, tags}.
func (s *Server) fileUpload(ctx *fasthttp.RequestCtx) (*call, fileapi.FileUpload, error) {
	var up fileapi.FileUpload
	user, _, basic := basicAuth(ctx.Request.Header.Peek("Authorization"))
	if header(ctx, "Application-Id") == s.opts.AppID || basic && user == s.opts.AppID {
		// The envelope must not read the file as JSON: hide it meanwhile.
		raw := ctx.Request.SwapBody(nil)
		c, err := s.envelope(ctx)
		ctx.Request.SwapBody(raw)
		up.Data, up.ContentType = ctx.PostBody(), string(ctx.Request.Header.ContentType())
		return c, up, err
	}
	up.ContentType = gjson.GetBytes(ctx.PostBody(), "_ContentType").String()
	c, err := s.envelope(ctx)
	if err != nil {
		return nil, up, err
	}
	b64, _ := c.body["base64"].(string)
	if _, data, ok := strings.Cut(b64, ";base64,"); ok && strings.HasPrefix(b64, "data:") {
		b64 = data // a data URI
	}
	if up.Data, err = base64.StdEncoding.DecodeString(b64); err != nil {
		return nil, up, schema.Errorf(schema.CodeFileSaveError, "Invalid file upload: base64 is not valid.")
	}
	fd, _ := c.body["fileData"].(map[string]any)
	up.Metadata, up.Tags = stringMap(fd["metadata"]), stringMap(fd["tags"])
	return c, up, nil
}

// stringMap keeps a JSON object's values as strings (metadata and tags
// are string to string).
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		out[k] = toString(x)
	}
	return out
}

// deleteFile removes a file: master key only, 200 {} when done.
func (s *Server) deleteFile(ctx *fasthttp.RequestCtx, name string) {
	c, err := s.envelope(ctx)
	if err == nil {
		err = requireMaster(c)
	}
	if err == nil {
		err = s.files.DeleteFile(c.auth, name)
	}
	if err != nil {
		s.writeError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{})
}

// openPublicFile checks the application id of a public file request and
// opens the file, answering the error itself when it cannot.
func (s *Server) openPublicFile(ctx *fasthttp.RequestCtx, appID, name string) (files.ReadSeekCloser, files.Info, bool) {
	if appID != s.opts.AppID {
		s.writeFileError(ctx, fasthttp.StatusForbidden, schema.CodeOperationForbidden, "Invalid application ID.")
		return nil, files.Info{}, false
	}
	r, info, err := s.files.OpenFile(name)
	switch {
	case errors.Is(err, files.ErrNotFound):
		s.writeFileError(ctx, fasthttp.StatusNotFound, schema.CodeObjectNotFound, "File not found.")
	case errors.Is(err, files.ErrTampered):
		s.log.Error("files: a stored file failed authentication: changed on disk, or the wrong encryptionKey",
			"file", name)
		s.writeFileError(ctx, fasthttp.StatusInternalServerError, schema.CodeInternalServerError, "The file could not be read.")
	case err != nil:
		s.writeError(ctx, err)
	default:
		return r, info, true
	}
	return nil, files.Info{}, false
}

func (s *Server) writeFileError(ctx *fasthttp.RequestCtx, status, code int, msg string) {
	ctx.SetUserValue(codeKey, code)
	writeJSON(ctx, status, map[string]any{"code": code, "error": msg})
}

// fileMetadata answers a file's metadata: {"metadata": {...}}, or {}.
func (s *Server) fileMetadata(ctx *fasthttp.RequestCtx, appID, name string) {
	r, info, ok := s.openPublicFile(ctx, appID, name)
	if !ok {
		return
	}
	r.Close()
	if len(info.Metadata) == 0 {
		writeJSON(ctx, fasthttp.StatusOK, map[string]any{})
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"metadata": info.Metadata})
}

// downloadFile streams a file with its content type and length, or one
// byte range of it (206). Only types a browser shows without running
// anything go inline (files.ServeAs); the rest is an attachment, so a
// browser never runs an upload on this origin.
func (s *Server) downloadFile(ctx *fasthttp.RequestCtx, appID, name string) {
	r, info, ok := s.openPublicFile(ctx, appID, name)
	if !ok {
		return
	}
	h := &ctx.Response.Header
	served := files.ServeAs(name, info.ContentType)
	h.SetContentType(served.ContentType)
	h.Set("Accept-Ranges", "bytes")
	h.Set("X-Content-Type-Options", "nosniff")
	if !served.Inline {
		h.Set("Content-Disposition", attachment(name))
	}
	start, n, status := int64(0), info.Size, fasthttp.StatusOK
	if spec := string(ctx.Request.Header.Peek("Range")); spec != "" {
		var ok bool
		if start, n, ok = parseRange(spec, info.Size); !ok {
			r.Close()
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
			s.writeFileError(ctx, fasthttp.StatusRequestedRangeNotSatisfiable, schema.CodeInvalidQuery,
				"The requested range is not satisfiable.")
			return
		}
		if n != info.Size {
			status = fasthttp.StatusPartialContent
			h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+n-1, info.Size))
		}
	}
	ctx.SetStatusCode(status)
	if ctx.IsHead() {
		r.Close()
		h.SetContentLength(int(n))
		return
	}
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		r.Close()
		s.writeError(ctx, err)
		return
	}
	ctx.SetBodyStream(readCloser{io.LimitReader(r, n), r}, int(n))
}

// attachment is the Content-Disposition of a file sent as an attachment.
func attachment(name string) string {
	if d := mime.FormatMediaType("attachment", map[string]string{"filename": name}); d != "" {
		return d
	}
	return "attachment" // a name the parameter cannot carry
}

// readCloser streams a part of a file and closes the file when done.
type readCloser struct {
	io.Reader
	io.Closer
}

// parseRange reads one "bytes=a-b", "bytes=a-" or "bytes=-n" range of a
// file of size bytes: its start and length. A list of ranges is answered
// whole (HTTP allows ignoring Range); ok is false when the range is
// unsatisfiable or malformed.
func parseRange(spec string, size int64) (start, n int64, ok bool) {
	rng, found := strings.CutPrefix(strings.TrimSpace(spec), "bytes=")
	if !found {
		return 0, 0, false
	}
	if strings.Contains(rng, ",") {
		return 0, size, true
	}
	a, b, found := strings.Cut(strings.TrimSpace(rng), "-")
	if !found {
		return 0, 0, false
	}
	end := size - 1
	var err error
	switch {
	case a == "": // the last b bytes
		var last int64
		if last, err = strconv.ParseInt(b, 10, 64); err != nil || last <= 0 {
			return 0, 0, false
		}
		start = max(size-last, 0)
	default:
		if start, err = strconv.ParseInt(a, 10, 64); err != nil || start < 0 {
			return 0, 0, false
		}
		if b != "" {
			if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
				return 0, 0, false
			}
			end = min(end, size-1)
		}
	}
	if start >= size {
		return 0, 0, false
	}
	return start, end - start + 1, true
}
