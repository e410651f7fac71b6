package fileapi

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

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

func (x *Files) hasTrigger(kind service.TriggerKind) bool {
	h := x.core.CloudHooks()
	return h != nil && h.Has(kind, service.FileClass)
}

// beforeSaveFile runs the beforeSaveFile trigger over up, taking the name,
// metadata and tags it gives back.
func (x *Files) beforeSaveFile(auth service.Auth, up *FileUpload) error {
	if !x.hasTrigger(service.BeforeSaveFile) {
		return nil
	}
	req := &service.TriggerRequest{Kind: service.BeforeSaveFile, Class: service.FileClass, Auth: auth,
		Object: fileObject(up.Name, up.ContentType, len(up.Data), up.Metadata, up.Tags)}
	if err := x.core.CloudHooks().Trigger(req); err != nil {
		return err
	}
	if name, ok := req.Object["name"].(string); ok && name != up.Name {
		if err := fileNameError(name, x.core.FileSettings().WideNames); err != nil {
			return err
		}
		up.Name = name
	}
	up.Metadata, up.Tags = fromStringMap(req.Object["metadata"]), fromStringMap(req.Object["tags"])
	return nil
}

// afterFileTrigger runs afterSaveFile or afterDeleteFile; errors are logged.
func (x *Files) afterTrigger(kind service.TriggerKind, auth service.Auth, obj schema.Object) {
	if !x.hasTrigger(kind) {
		return
	}
	if err := x.core.CloudHooks().Trigger(&service.TriggerRequest{Kind: kind, Class: service.FileClass, Auth: auth, Object: obj}); err != nil {
		x.core.Warn("cloud trigger failed: " + err.Error())
	}
}

// beforeDeleteFile runs the beforeDeleteFile trigger; its error refuses.
func (x *Files) beforeDeleteFile(auth service.Auth, name string) error {
	if !x.hasTrigger(service.BeforeDeleteFile) {
		return nil
	}
	return x.core.CloudHooks().Trigger(&service.TriggerRequest{Kind: service.BeforeDeleteFile, Class: service.FileClass, Auth: auth,
		Object: schema.Object{"name": name, "url": x.core.FileURL(name)}})
}
