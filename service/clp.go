package service

import "github.com/quarrydata/quarry/schema"

// DefaultCLP is the CLP of a class that has none stored: every operation
// public, nothing protected.
func DefaultCLP() map[string]any { return schema.DefaultCLP() }

// normalizeCLP validates a client's class-level permissions (the rules
// live in schema, which the importer shares).
func normalizeCLP(v any, fields map[string]schema.Field) (map[string]any, error) {
	return schema.NormalizeCLP(v, fields)
}
