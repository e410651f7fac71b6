package webhooks

import (
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Classes whose triggers only some kinds may name.
const (
	classUser    = "_User"
	classSession = "_Session"
)

// Webhook is cloud code run by an HTTP POST to URL: a function when
// FunctionName is set, else the trigger TriggerName of ClassName.
type Webhook struct {
	FunctionName string
	ClassName    string
	TriggerName  string
	URL          string
}

// IsFunction reports whether w is a function webhook.
func (w Webhook) IsFunction() bool { return w.FunctionName != "" }

// Kind is the trigger kind a trigger webhook runs as, with Parse's
// names: the file triggers are beforeSave, afterSave, beforeDelete and
// afterDelete of class "@File", beforeConnect is of class "@Connect",
// afterEvent is afterLiveQueryEvent (both names are accepted, as are
// beforeSaveFile and the like with "@File"). A kind on a class it cannot
// run for (beforeLogin of anything but _User, for one) is not a kind.
func (w Webhook) Kind() (service.TriggerKind, bool) {
	name := w.TriggerName
	if name == "afterEvent" {
		name = service.AfterLiveQueryEvent.String()
	}
	if w.ClassName == service.FileClass {
		if k, ok := fileKinds[name]; ok {
			return k, true
		}
		return 0, false
	}
	for k := range service.NumTriggerKinds {
		if k.String() != name {
			continue
		}
		switch k {
		case service.BeforeLogin, service.AfterLogin:
			return k, w.ClassName == classUser
		case service.AfterLogout:
			return k, w.ClassName == classSession
		case service.BeforeConnect:
			return k, w.ClassName == service.ConnectClass
		case service.BeforeSaveFile, service.AfterSaveFile, service.BeforeDeleteFile, service.AfterDeleteFile:
			return 0, false // only with FileClass, above
		}
		// Parse runs no class triggers on _Session.
		return k, w.ClassName != classSession && schema.ValidClassName(w.ClassName)
	}
	return 0, false
}

// fileKinds are the trigger names a webhook of class "@File" may have:
// Parse's (a save or delete name) and the file kinds' own.
var fileKinds = map[string]service.TriggerKind{
	"beforeSave": service.BeforeSaveFile, "afterSave": service.AfterSaveFile,
	"beforeDelete": service.BeforeDeleteFile, "afterDelete": service.AfterDeleteFile,
	"beforeSaveFile": service.BeforeSaveFile, "afterSaveFile": service.AfterSaveFile,
	"beforeDeleteFile": service.BeforeDeleteFile, "afterDeleteFile": service.AfterDeleteFile,
}

// sameWebhook reports whether a and b name the same function, or the same
// trigger kind of a class (afterEvent is afterLiveQueryEvent).
func sameWebhook(a, b Webhook) bool {
	if a.FunctionName != b.FunctionName || a.ClassName != b.ClassName {
		return false
	}
	if a.IsFunction() || a.TriggerName == b.TriggerName {
		return true
	}
	ka, okA := a.Kind()
	kb, okB := b.Kind()
	return okA && okB && ka == kb
}
