package service

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Parse Config (GET and PUT /config).
//
// The parameters live in one object, objectId "1", of the internal class
// _GlobalConfig (as in Parse Server): {params: {...}, masterKeyOnly:
// {name: bool}}. The class name starts with an underscore and is not a
// built-in class, so no client reaches it through /classes; it is written
// through the same store adapter as every object and loaded with them.
const (
	// ConfigClass is the internal class holding Parse Config.
	ConfigClass = "_GlobalConfig"
	configID    = "1"
	// MaxConfigParams is the most parameters Parse Config holds (116 beyond).
	MaxConfigParams = 100
)

// Config returns Parse Config as GET /config answers it: every parameter
// for the master key; without it, the parameters flagged master-only (and
// their flags) are left out.
func (s *Service) Config(auth Auth) map[string]any {
	var params, flags map[string]any
	if c := s.data.Collection(ConfigClass, false); c != nil {
		if obj, ok := c.Get(configID); ok {
			params, _ = obj["params"].(map[string]any)
			flags, _ = obj["masterKeyOnly"].(map[string]any)
		}
	}
	out := map[string]any{}
	p := make(map[string]any, len(params))
	var f map[string]any
	if len(flags) > 0 {
		f = make(map[string]any, len(flags))
	}
	for k, v := range params {
		if !auth.Master && flags[k] == true {
			continue
		}
		p[k] = v
		if flag, ok := flags[k]; ok {
			f[k] = flag
		}
	}
	out["params"] = p
	if f != nil {
		out["masterKeyOnly"] = f
	}
	return out
}

// UpdateConfig merges a PUT /config body into Parse Config: each key of
// params is set (or removed with {"__op":"Delete"}), and masterKeyOnly
// flags parameters as visible to the master key only. The caller has
// checked for the master key.
func (s *Service) UpdateConfig(auth Auth, body map[string]any) error {
	if auth.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "read-only masterKey isn't allowed to update the config.")
	}
	for k := range body {
		if k != "params" && k != "masterKeyOnly" {
			return schema.Errorf(schema.CodeInvalidJSON, "unknown config key: %s", k)
		}
	}
	if err := s.checkDenylist(body); err != nil { // denylist.go
		return err
	}
	changes, err := objectParam(body, "params")
	if err != nil {
		return err
	}
	flagChanges, err := objectParam(body, "masterKeyOnly")
	if err != nil {
		return err
	}
	unlock := s.lockObjects([]string{ConfigClass + "\x00" + configID})
	defer unlock()
	coll := s.data.Collection(ConfigClass, true)
	cur, exists := coll.Get(configID)
	params := schema.CopyObject(asMap(cur["params"]))
	flags := schema.CopyObject(asMap(cur["masterKeyOnly"]))
	for _, k := range slices.Sorted(maps.Keys(changes)) {
		if err := checkConfigName(k); err != nil {
			return err
		}
		v := changes[k]
		if op, ok := v.(map[string]any); ok && op["__op"] != nil {
			if op["__op"] != "Delete" {
				return schema.Errorf(schema.CodeCommandUnavailable, "The %v operator is not supported on config parameters.", op["__op"])
			}
			delete(params, k)
			delete(flags, k)
			continue
		}
		norm, err := normalizeValue(v, 1)
		if err != nil {
			return err
		}
		params[k] = norm
	}
	for _, k := range slices.Sorted(maps.Keys(flagChanges)) {
		switch v := flagChanges[k].(type) {
		case bool:
			if _, ok := params[k]; ok {
				flags[k] = v
			}
		case map[string]any:
			if v["__op"] != "Delete" {
				return schema.Errorf(schema.CodeInvalidJSON, "masterKeyOnly.%s must be a boolean", k)
			}
			delete(flags, k)
		default:
			return schema.Errorf(schema.CodeInvalidJSON, "masterKeyOnly.%s must be a boolean", k)
		}
	}
	if len(params) > MaxConfigParams {
		return schema.Errorf(schema.CodeObjectTooLarge, "Parse Config holds at most %d parameters.", MaxConfigParams)
	}
	now := schema.FormatTime(s.opts.Now())
	obj := schema.Object{"objectId": configID, "params": params, "updatedAt": now}
	if len(flags) > 0 {
		obj["masterKeyOnly"] = flags
	}
	obj["createdAt"] = now
	if exists {
		obj["createdAt"] = cur["createdAt"]
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if len(b) > MaxObjectBytes {
		return schema.Errorf(schema.CodeObjectTooLarge, "Parse Config is larger than %d bytes", MaxObjectBytes)
	}
	if err := s.store.Commit([]store.Record{{Kind: store.KindObject, Class: ConfigClass, Key: configID, Value: b}}); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	coll.Put(obj)
	return nil
}

func checkConfigName(k string) error {
	if k == "" || len(k) > schema.MaxKeyLength || strings.ContainsAny(k, ".") || strings.HasPrefix(k, "$") || prohibitedKeys[k] {
		return schema.Errorf(schema.CodeInvalidKeyName, "Invalid config parameter name: %q", k)
	}
	return nil
}

// objectParam reads an optional object-valued key of a body.
func objectParam(body map[string]any, key string) (map[string]any, error) {
	v, ok := body[key]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schema.Errorf(schema.CodeInvalidJSON, "%s must be an object", key)
	}
	return m, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
