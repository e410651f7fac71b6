package config

import (
	"errors"
	"fmt"
)

// checkSchemaOption refuses a schema option whose definitions are not
// objects naming their class, or whose other keys are unknown or not
// booleans. beforeMigration and afterMigration, JavaScript callbacks, are
// refused: they cannot be given here.
func checkSchemaOption(s map[string]any) error {
	if s == nil {
		return nil
	}
	var errs []error
	for k, v := range s {
		switch k {
		case "definitions":
			defs, ok := v.([]any)
			if !ok {
				errs = append(errs, errors.New("definitions: want an array of class definitions"))
				continue
			}
			for i, d := range defs {
				m, ok := d.(map[string]any)
				if name, _ := m["className"].(string); !ok || name == "" {
					errs = append(errs, fmt.Errorf("definitions[%d]: want an object with a className", i))
				}
			}
		case "strict", "deleteExtraFields", "recreateModifiedFields", "lockSchemas":
			if _, ok := v.(bool); !ok {
				errs = append(errs, fmt.Errorf("%s: want true or false", k))
			}
		default:
			errs = append(errs, fmt.Errorf("unknown key %q (want definitions, strict, deleteExtraFields, recreateModifiedFields, lockSchemas)", k))
		}
	}
	return errors.Join(errs...)
}

// SchemaDefinitions returns the schema option's definitions.
func (o *Options) SchemaDefinitions() []map[string]any {
	defs, _ := o.Schema["definitions"].([]any)
	out := make([]map[string]any, 0, len(defs))
	for _, d := range defs {
		if m, ok := d.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// SchemaSwitch reads one of the schema option's switches (false unset).
func (o *Options) SchemaSwitch(name string) bool {
	b, _ := o.Schema[name].(bool)
	return b
}
