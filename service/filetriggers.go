package service

import "github.com/quarrydata/quarry/schema"

// File triggers: the trigger's object describes the file as
// {"name", "contentType", "size", "metadata", "tags"} (and "url" after
// the save). beforeSaveFile may change name, metadata and tags, or refuse.

func fileObject(name, contentType string, size int, metadata, tags map[string]string) schema.Object {
	obj := schema.Object{"name": name, "size": float64(size), "metadata": stringMap(metadata), "tags": stringMap(tags)}
	if contentType != "" {
		obj["contentType"] = contentType
	}
	return obj
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func fromStringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out
}

func (s *Service) hasFileTrigger(kind TriggerKind) bool {
	return s.opts.Hooks != nil && s.opts.Hooks.Has(kind, FileClass)
}

// beforeSaveFile runs the beforeSaveFile trigger over up, taking the name,
// metadata and tags it gives back.
func (s *Service) beforeSaveFile(auth Auth, up *FileUpload) error {
	if !s.hasFileTrigger(BeforeSaveFile) {
		return nil
	}
	req := &TriggerRequest{Kind: BeforeSaveFile, Class: FileClass, Auth: auth,
		Object: fileObject(up.Name, up.ContentType, len(up.Data), up.Metadata, up.Tags)}
	if err := s.opts.Hooks.Trigger(req); err != nil {
		return err
	}
	if name, ok := req.Object["name"].(string); ok && name != up.Name {
		if err := fileNameError(name, s.opts.Files.WideNames); err != nil {
			return err
		}
		up.Name = name
	}
	up.Metadata, up.Tags = fromStringMap(req.Object["metadata"]), fromStringMap(req.Object["tags"])
	return nil
}

// afterFileTrigger runs afterSaveFile or afterDeleteFile; errors are logged.
func (s *Service) afterFileTrigger(kind TriggerKind, auth Auth, obj schema.Object) {
	if s.hasFileTrigger(kind) {
		s.warnTrigger(s.opts.Hooks.Trigger(&TriggerRequest{Kind: kind, Class: FileClass, Auth: auth, Object: obj}))
	}
}

// beforeDeleteFile runs the beforeDeleteFile trigger; its error refuses.
func (s *Service) beforeDeleteFile(auth Auth, name string) error {
	if !s.hasFileTrigger(BeforeDeleteFile) {
		return nil
	}
	return s.opts.Hooks.Trigger(&TriggerRequest{Kind: BeforeDeleteFile, Class: FileClass, Auth: auth,
		Object: schema.Object{"name": name, "url": s.FileURL(name)}})
}
