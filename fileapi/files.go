// Package fileapi owns the files API: uploads (the name rules,
// maxUploadSize, fileUpload's callers and extensions, the file triggers),
// downloads and deletes, over the storage adapters of package files. It
// works through the narrow Core the service offers; the service never
// imports it (the core only gives File values their URL), and package
// files never imports it.
package fileapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/index"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Core is what the files API needs of the service: its settings, the
// file URLs, the users (anonymous or not), the denylist, the cloud code
// hooks and the log.
type Core interface {
	FileSettings() *service.FilesOptions
	FileURL(name string) string
	Data() *index.DB
	CheckDenylist(data any) error
	CloudHooks() service.Hooks
	Warn(msg string)
}

// Files serves the files API over a Core. It keeps no state of its own,
// so any number of front ends may each hold one.
type Files struct {
	core Core
}

// New returns the files API served through core.
func New(core Core) *Files { return &Files{core: core} }

// user is the stored _User id.
func (x *Files) user(id string) (schema.Object, bool) {
	if id == "" {
		return nil, false
	}
	c := x.core.Data().Collection("_User", false)
	if c == nil {
		return nil, false
	}
	return c.Get(id)
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
func (x *Files) FilesEnabled() bool { return x.core.FileSettings().Adapter != nil }

// SaveFile checks an upload against the name rules, maxUploadSize and
// fileUpload, and stores it under a unique name.
func (x *Files) SaveFile(auth service.Auth, up FileUpload) (SavedFile, error) {
	fo := x.core.FileSettings()
	if err := fileNameError(up.Name, fo.WideNames); err != nil {
		return SavedFile{}, err
	}
	if len(up.Data) == 0 {
		return SavedFile{}, schema.Errorf(schema.CodeFileSaveError, "Invalid file upload.")
	}
	if fo.MaxSize > 0 && int64(len(up.Data)) > fo.MaxSize {
		return SavedFile{}, schema.Errorf(schema.CodeFileTooLarge, "The file is larger than maxUploadSize (%d bytes).", fo.MaxSize)
	}
	if err := x.mayUpload(auth, up); err != nil {
		return SavedFile{}, err
	}
	for _, m := range []map[string]string{up.Metadata, up.Tags} {
		if err := x.core.CheckDenylist(m); err != nil { // denylist.go
			return SavedFile{}, err
		}
	}
	if err := x.beforeSaveFile(auth, &up); err != nil {
		return SavedFile{}, err
	}
	name := files.StoredName(up.Name, fo.PreserveFileName)
	info := files.Info{ContentType: files.ContentType(up.Name, up.ContentType), Metadata: up.Metadata, Tags: up.Tags}
	err := fo.Adapter.Create(context.Background(), name, bytes.NewReader(up.Data), int64(len(up.Data)), info)
	if err != nil {
		x.core.Warn(fmt.Sprintf("files: storing %s failed: %v", name, err))
		return SavedFile{}, schema.Errorf(schema.CodeFileSaveError, "Could not store file: %s.", up.Name)
	}
	saved := SavedFile{Name: name, URL: x.core.FileURL(name)}
	if x.hasTrigger(service.AfterSaveFile) {
		obj := fileObject(name, info.ContentType, len(up.Data), up.Metadata, up.Tags)
		obj["url"] = saved.URL
		x.afterTrigger(service.AfterSaveFile, auth, obj)
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
func (x *Files) mayUpload(auth service.Auth, up FileUpload) error {
	if auth.Master {
		return nil
	}
	fo := x.core.FileSettings()
	switch {
	case auth.UserID == "":
		if !fo.EnableForPublic {
			return schema.Errorf(schema.CodeFileSaveError, "File upload by public is disabled.")
		}
	case x.isAnonymousUser(auth.UserID):
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
func (x *Files) isAnonymousUser(id string) bool {
	u, ok := x.user(id)
	if !ok {
		return false
	}
	ad, _ := u["authData"].(map[string]any)
	_, anon := ad["anonymous"]
	return anon
}

// OpenFile opens a stored file for reading; a missing one is
// files.ErrNotFound, a tampered one files.ErrTampered.
func (x *Files) OpenFile(name string) (files.ReadSeekCloser, files.Info, error) {
	return x.core.FileSettings().Adapter.Open(context.Background(), name)
}

// DeleteFile removes a stored file: master key only. Objects that refer
// to it keep their File values.
func (x *Files) DeleteFile(auth service.Auth, name string) error {
	if !auth.Master {
		return schema.Errorf(schema.CodeOperationForbidden, "Deleting a file requires the master key.")
	}
	if auth.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to delete a file.")
	}
	if err := x.beforeDeleteFile(auth, name); err != nil {
		return err
	}
	if err := x.core.FileSettings().Adapter.Delete(context.Background(), name); err != nil {
		if !errors.Is(err, files.ErrNotFound) {
			x.core.Warn(fmt.Sprintf("files: deleting %s failed: %v", name, err))
		}
		return schema.Errorf(schema.CodeFileDeleteError, "Could not delete file.")
	}
	x.afterTrigger(service.AfterDeleteFile, auth, schema.Object{"name": name, "url": x.core.FileURL(name)})
	return nil
}
