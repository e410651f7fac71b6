package service

import (
	"maps"

	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/schema"
)

// FilesOptions configure the files API (Options.Files): the core gives
// File values their URL; the uploads, downloads and deletes themselves
// are the fileapi component's, which reads the rest (FileSettings).
type FilesOptions struct {
	// Adapter stores the bytes; nil turns the files API off.
	Adapter files.Adapter
	// Who may upload without the master key (fileUpload.enableFor*).
	EnableForPublic, EnableForAnonymousUser, EnableForAuthenticatedUser bool
	// AllowExtension decides fileUpload.fileExtensions for non-master
	// uploads (files.ExtensionRule); nil allows every extension.
	AllowExtension func(ext string) bool
	// PreserveFileName keeps names as uploaded (no random prefix).
	PreserveFileName bool
	// WideNames accepts Parse Server 9's file names (also "-", "@", "~"
	// and space) instead of the specification's (letters, digits, "_",
	// "."): compatibility "parse-server".
	WideNames bool
	// MaxSize is the largest file in bytes (maxUploadSize); 0 means none.
	MaxSize int64
	// URL gives a stored name's public address (publicServerURL +
	// /files/<appId>/<name>); every File value read gets it.
	URL func(name string) string
}

// FileSettings are the configured files API options (Options.Files),
// read-only, for the fileapi component.
func (s *Service) FileSettings() *FilesOptions { return &s.opts.Files }

// FileURL is the public address of a stored file ("" with no files API).
func (s *Service) FileURL(name string) string {
	if s.opts.Files.URL == nil {
		return ""
	}
	return s.opts.Files.URL(name)
}

func (s *Service) warn(msg string) {
	if s.opts.Warn != nil {
		s.opts.Warn(msg)
	}
}

type fileFieldsEntry struct {
	cls    *schema.Class
	fields []string
}

// fileFields lists the class's File fields, computed once per schema
// version; none when no file URLs are configured.
func (s *Service) fileFields(class string) []string {
	if s.opts.Files.URL == nil {
		return nil
	}
	cls := s.Class(class)
	if cls == nil {
		return nil
	}
	if e, ok := s.fileFieldsCache.Load(class); ok && e.(*fileFieldsEntry).cls == cls {
		return e.(*fileFieldsEntry).fields
	}
	var fields []string
	for k, f := range cls.Fields {
		if f.Type == schema.TypeFile {
			fields = append(fields, k)
		}
	}
	s.fileFieldsCache.Store(class, &fileFieldsEntry{cls, fields})
	return fields
}

// holdsFiles reports whether obj has a File value whose url a reply
// rewrites (see setFileURLs).
func (s *Service) holdsFiles(class string, obj schema.Object) bool {
	for _, f := range s.fileFields(class) {
		if _, ok := obj[f].(map[string]any); ok {
			return true
		}
	}
	return false
}

// setFileURLs gives each File value of a reply copy the current address
// of its file, whatever url was stored: the one place File urls are made.
func (s *Service) setFileURLs(class string, out schema.Object) {
	for _, f := range s.fileFields(class) {
		v, ok := out[f].(map[string]any)
		if !ok {
			continue
		}
		name, _ := v["name"].(string)
		if v["__type"] != "File" || name == "" {
			continue
		}
		v = maps.Clone(v)
		v["url"] = s.opts.Files.URL(name)
		out[f] = v
	}
}
