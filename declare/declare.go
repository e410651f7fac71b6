// Package declare applies Parse Server's schema option at start-up: the
// declared classes, their fields, indexes and class-level permissions are
// created or brought up to date through the service's schema API, with the
// master key. Classes not declared are never touched. It does no I/O of
// its own and never imports transport.
package declare

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"reflect"
	"slices"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// Options are the schema option's switches.
type Options struct {
	// Strict fails the start-up when a class cannot be brought up to date;
	// otherwise the error is logged and the next class is tried.
	Strict bool
	// DeleteExtraFields deletes fields (and their data) the definition
	// does not declare.
	DeleteExtraFields bool
	// RecreateModifiedFields deletes and adds again, empty, a field whose
	// type or target class differs from its declaration.
	RecreateModifiedFields bool
}

// Schemas is the part of the service Apply uses.
type Schemas interface {
	Schema(class string) (map[string]any, error)
	CreateSchema(auth service.Auth, class string, body map[string]any) (map[string]any, error)
	UpdateSchema(auth service.Auth, class string, body map[string]any) (map[string]any, error)
}

var master = service.Auth{Master: true}

// Apply brings every definition ({className, fields, indexes,
// classLevelPermissions}, as Parse Server takes them) into the schemas.
func Apply(svc Schemas, definitions []map[string]any, opts Options, log *slog.Logger) error {
	var errs []error
	for _, def := range definitions {
		def := plain(def).(map[string]any)
		class, _ := def["className"].(string)
		if err := applyOne(svc, class, def, opts, log); err != nil {
			err = fmt.Errorf("schema: class %s: %w", class, err)
			if opts.Strict {
				return err
			}
			log.Error("schema option: a declared class could not be brought up to date", "class", class, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func applyOne(svc Schemas, class string, def map[string]any, opts Options, log *slog.Logger) error {
	fields, _ := def["fields"].(map[string]any)
	indexes, _ := def["indexes"].(map[string]any)
	cur, err := svc.Schema(class)
	if err != nil {
		var perr *schema.Error
		if !errors.As(err, &perr) || perr.Code != schema.CodeInvalidClassName {
			return err
		}
		body := map[string]any{}
		for _, k := range []string{"fields", "indexes", "classLevelPermissions"} {
			if v, ok := def[k]; ok {
				body[k] = v
			}
		}
		_, err = svc.CreateSchema(master, class, withoutSystemFields(class, body))
		return err
	}
	curFields, _ := cur["fields"].(map[string]any)
	add, drop := map[string]any{}, map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		want, have := fields[name], curFields[name]
		switch {
		case systemField(class, name):
		case have == nil:
			add[name] = want
		case !sameType(want, have):
			if !opts.RecreateModifiedFields {
				log.Warn("schema option: a field's type differs from its declaration; set recreateModifiedFields to recreate it (its data is lost)",
					"class", class, "field", name, "declared", typeOf(want), "stored", typeOf(have))
				continue
			}
			drop[name], add[name] = deleteOp(), want
		}
	}
	if opts.DeleteExtraFields {
		for name := range curFields {
			if _, declared := fields[name]; !declared && !systemField(class, name) {
				drop[name] = deleteOp()
			}
		}
	}
	idxAdd, idxDrop := map[string]any{}, map[string]any{}
	if _, ok := def["indexes"]; ok {
		curIdx, _ := cur["indexes"].(map[string]any)
		for name, spec := range indexes {
			if have, ok := curIdx[name]; !ok || !sameIndex(have, spec) {
				idxAdd[name] = spec
				if ok {
					idxDrop[name] = deleteOp()
				}
			}
		}
		for name := range curIdx {
			if _, declared := indexes[name]; !declared && name != "_id_" {
				idxDrop[name] = deleteOp()
			}
		}
	}
	// Drops first (a recreated field or index is dropped, then added).
	if len(drop) > 0 || len(idxDrop) > 0 {
		body := map[string]any{}
		if len(drop) > 0 {
			body["fields"] = drop
		}
		if len(idxDrop) > 0 {
			body["indexes"] = idxDrop
		}
		if _, err := svc.UpdateSchema(master, class, body); err != nil {
			return err
		}
	}
	body := map[string]any{}
	if len(add) > 0 {
		body["fields"] = add
	}
	if len(idxAdd) > 0 {
		body["indexes"] = idxAdd
	}
	if clp, ok := def["classLevelPermissions"]; ok && !reflect.DeepEqual(clp, cur["classLevelPermissions"]) {
		body["classLevelPermissions"] = clp
	}
	if len(body) == 0 {
		return nil
	}
	_, err = svc.UpdateSchema(master, class, body)
	return err
}

func deleteOp() map[string]any { return map[string]any{"__op": "Delete"} }

// systemField reports whether a field is every class's or the built-in
// class's own: declared or not, it stays as it is.
func systemField(class, name string) bool {
	for _, fields := range []iter.Seq2[string, schema.Field]{schema.DefaultFields(), schema.BuiltinFields(class)} {
		for k := range fields {
			if k == name {
				return true
			}
		}
	}
	return false
}

func withoutSystemFields(class string, body map[string]any) map[string]any {
	fields, ok := body["fields"].(map[string]any)
	if !ok {
		return body
	}
	kept := map[string]any{}
	for k, v := range fields {
		if !systemField(class, k) {
			kept[k] = v
		}
	}
	body["fields"] = kept
	return body
}

func typeOf(f any) string {
	m, _ := f.(map[string]any)
	t, _ := m["type"].(string)
	if target, _ := m["targetClass"].(string); target != "" {
		return t + "<" + target + ">"
	}
	return t
}

func sameType(a, b any) bool { return typeOf(a) == typeOf(b) }

// sameIndex compares index specs whatever their numbers' Go types.
func sameIndex(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// plain turns the numbers of a definition (json.Number from a config
// file, ints from Go) into float64, as a decoded request body has them.
func plain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case int:
		return float64(x)
	}
	return v
}
