package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/schema"
)

// FilesOptions configure the files API (Options.Files).
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

// FileUpload is one file to store.
type FileUpload struct {
	Name        string // as the client gave it
	ContentType string // "" means guessed from the name
	Data        []byte
	Metadata    map[string]string
	Tags        map[string]string
}

// SavedFile is the reply to an upload.
type SavedFile struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// FilesEnabled reports whether a files adapter is configured.
func (s *Service) FilesEnabled() bool { return s.opts.Files.Adapter != nil }

// SaveFile checks an upload against the name rules, maxUploadSize and
// fileUpload, and stores it under a unique name.
func (s *Service) SaveFile(auth Auth, up FileUpload) (SavedFile, error) {
	fo := s.opts.Files
	if err := fileNameError(up.Name, fo.WideNames); err != nil {
		return SavedFile{}, err
	}
	if len(up.Data) == 0 {
		return SavedFile{}, schema.Errorf(schema.CodeFileSaveError, "Invalid file upload.")
	}
	if fo.MaxSize > 0 && int64(len(up.Data)) > fo.MaxSize {
		return SavedFile{}, schema.Errorf(schema.CodeFileTooLarge, "The file is larger than maxUploadSize (%d bytes).", fo.MaxSize)
	}
	if err := s.mayUpload(auth, up); err != nil {
		return SavedFile{}, err
	}
	for _, m := range []map[string]string{up.Metadata, up.Tags} {
		if err := s.checkDenylist(m); err != nil { // denylist.go
			return SavedFile{}, err
		}
	}
	if err := s.beforeSaveFile(auth, &up); err != nil {
		return SavedFile{}, err
	}
	name := files.StoredName(up.Name, fo.PreserveFileName)
	info := files.Info{ContentType: files.ContentType(up.Name, up.ContentType), Metadata: up.Metadata, Tags: up.Tags}
	err := fo.Adapter.Create(context.Background(), name, bytes.NewReader(up.Data), int64(len(up.Data)), info)
	if err != nil {
		s.warn(fmt.Sprintf("files: storing %s failed: %v", name, err))
		return SavedFile{}, schema.Errorf(schema.CodeFileSaveError, "Could not store file: %s.", up.Name)
	}
	saved := SavedFile{Name: name, URL: s.FileURL(name)}
	if s.hasFileTrigger(AfterSaveFile) {
		obj := fileObject(name, info.ContentType, len(up.Data), up.Metadata, up.Tags)
		obj["url"] = saved.URL
		s.afterFileTrigger(AfterSaveFile, auth, obj)
	}
	return saved, nil
}

// fileNameError checks a client's file name (files.ValidSpecName, or
// files.ValidName when wide) with Parse's messages.
func fileNameError(name string, wide bool) error {
	valid := files.ValidSpecName
	if wide {
		valid = files.ValidName
	}
	switch err := valid(name); {
	case name == "":
		return schema.Errorf(schema.CodeInvalidFileName, "Filename not provided.")
	case errors.Is(err, files.ErrNameTooLong):
		return schema.Errorf(schema.CodeInvalidFileName, "Filename too long.")
	case err != nil:
		return schema.Errorf(schema.CodeInvalidFileName, "Filename contains invalid characters.")
	}
	return nil
}

// mayUpload applies fileUpload: the master key may always upload; others
// by the kind of caller they are, and then only allowed extensions.
func (s *Service) mayUpload(auth Auth, up FileUpload) error {
	if auth.Master {
		return nil
	}
	fo := s.opts.Files
	switch {
	case auth.UserID == "":
		if !fo.EnableForPublic {
			return schema.Errorf(schema.CodeFileSaveError, "File upload by public is disabled.")
		}
	case s.isAnonymousUser(auth.UserID):
		if !fo.EnableForAnonymousUser {
			return schema.Errorf(schema.CodeFileSaveError, "File upload by anonymous user is disabled.")
		}
	default:
		if !fo.EnableForAuthenticatedUser {
			return schema.Errorf(schema.CodeFileSaveError, "File upload by authenticated user is disabled.")
		}
	}
	ext := files.Extension(up.Name, up.ContentType)
	if fo.AllowExtension != nil && !fo.AllowExtension(ext) {
		return schema.Errorf(schema.CodeFileSaveError, "File upload of extension %s is disabled.", ext)
	}
	return nil
}

// isAnonymousUser reports whether the user signed up anonymously (an
// "anonymous" entry in authData).
func (s *Service) isAnonymousUser(id string) bool {
	u, ok := s.userByID(id)
	if !ok {
		return false
	}
	ad, _ := u["authData"].(map[string]any)
	_, anon := ad["anonymous"]
	return anon
}

// OpenFile opens a stored file for reading; a missing one is
// files.ErrNotFound, a tampered one files.ErrTampered.
func (s *Service) OpenFile(name string) (files.ReadSeekCloser, files.Info, error) {
	return s.opts.Files.Adapter.Open(context.Background(), name)
}

// DeleteFile removes a stored file: master key only. Objects that refer
// to it keep their File values.
func (s *Service) DeleteFile(auth Auth, name string) error {
	if !auth.Master {
		return schema.Errorf(schema.CodeOperationForbidden, "Deleting a file requires the master key.")
	}
	if auth.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to delete a file.")
	}
	if err := s.beforeDeleteFile(auth, name); err != nil {
		return err
	}
	if err := s.opts.Files.Adapter.Delete(context.Background(), name); err != nil {
		if !errors.Is(err, files.ErrNotFound) {
			s.warn(fmt.Sprintf("files: deleting %s failed: %v", name, err))
		}
		return schema.Errorf(schema.CodeFileDeleteError, "Could not delete file.")
	}
	s.afterFileTrigger(AfterDeleteFile, auth, schema.Object{"name": name, "url": s.FileURL(name)})
	return nil
}

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
