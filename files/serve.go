package files

import (
	"mime"
	"regexp"
	"strings"
)

// How a stored file goes out. The stored content type is whatever the
// uploader sent; a browser reads a Content-Type header its own way (a
// list "text/plain,text/html" means text/html to it). So the server never
// sends the stored value: it works out the one type a browser would pick,
// sends that type alone, and shows the file inline only when that type is
// on inlineTypes. Everything else is an attachment, and every download
// carries nosniff.

// inlineTypes are the media types a browser shows without running
// anything on the page's origin: raster images (not SVG), audio and video,
// plain text and JSON (shown as text under nosniff), and PDF (shown by the
// browser's own viewer, apart from the origin).
var inlineTypes = map[string]bool{
	"image/png": true, "image/apng": true, "image/jpeg": true, "image/pjpeg": true, "image/gif": true,
	"image/webp": true, "image/avif": true, "image/bmp": true, "image/x-icon": true, "image/vnd.microsoft.icon": true,
	"audio/mpeg": true, "audio/mp4": true, "audio/aac": true, "audio/ogg": true, "audio/wav": true,
	"audio/x-wav": true, "audio/webm": true, "audio/flac": true, "video/mp4": true, "video/webm": true,
	"video/ogg": true, "video/quicktime": true, "text/plain": true, "application/json": true, "application/pdf": true,
}

// octetStream is sent for a stored type no browser would make sense of.
const octetStream = "application/octet-stream"

// charsetShape is a charset parameter worth passing on.
var charsetShape = regexp.MustCompile(`^[A-Za-z0-9._:+-]{1,40}$`)

// Served is how one file is sent: the single Content-Type header value,
// and whether it may be shown inline (else Content-Disposition:
// attachment).
type Served struct {
	ContentType string
	Inline      bool
}

// ServeAs decides how a file called name, stored with content type
// stored, is sent.
func ServeAs(name, stored string) Served {
	essence, charset := BrowserType(stored)
	if essence == "" {
		return Served{ContentType: octetStream}
	}
	out := Served{ContentType: essence, Inline: inlineTypes[essence] && !activeName(name)}
	if charset != "" && strings.HasPrefix(essence, "text/") {
		out.ContentType = mime.FormatMediaType(essence, map[string]string{"charset": charset})
	}
	return out
}

// BrowserType is the media type (lower-cased type/subtype) and charset a
// browser takes from a Content-Type header holding value, following the
// Fetch standard's "extract a MIME type": of a comma-separated list the
// last valid type wins, "*/*" is ignored, and a charset carries over while
// the type repeats. essence is "" when no valid type is there.
func BrowserType(value string) (essence, charset string) {
	for _, part := range splitHeader(value) {
		mt, params, err := mime.ParseMediaType(part)
		if err != nil && err != mime.ErrInvalidMediaParameter || mt == "" || mt == "*/*" || !strings.Contains(mt, "/") {
			continue
		}
		cs := params["charset"]
		if !charsetShape.MatchString(cs) {
			cs = ""
		}
		switch {
		case mt != essence:
			essence, charset = mt, cs
		case cs != "":
			charset = cs
		}
	}
	return essence, charset
}

// splitHeader splits a header value at commas outside quoted strings.
func splitHeader(v string) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			parts = append(parts, v[start:i])
			start = i + 1
		}
	}
	return append(parts, v[start:])
}

// activeName reports whether name's extension is one of active content.
func activeName(name string) bool {
	i := strings.LastIndexByte(name, '.')
	return i >= 0 && activeExtensions[strings.ToLower(name[i+1:])]
}
