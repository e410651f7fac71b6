package service

import (
	"fmt"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// graphQLConfigShape is what /graphql-config's classConfigs entries may
// hold (Parse Server's ParseGraphQLServer config): per key, the JSON kind
// of its value, or the shape of a nested object.
var graphQLConfigShape = map[string]any{
	"className": "string",
	"type": map[string]any{
		"inputFields":      map[string]any{"create": "strings", "update": "strings"},
		"outputFields":     "strings",
		"constraintFields": "strings",
		"sortFields":       "sortFields",
	},
	"query": map[string]any{"get": "bool", "find": "bool", "getAlias": "string", "findAlias": "string"},
	"mutation": map[string]any{"create": "bool", "update": "bool", "destroy": "bool",
		"createAlias": "string", "updateAlias": "string", "destroyAlias": "string"},
}

// checkGraphQLConfig lists every problem of a GraphQL config, so that the
// Dashboard's user fixes them in one go; nil when there is none.
func checkGraphQLConfig(params map[string]any) error {
	var problems []string
	for _, k := range []string{"enabledForClasses", "disabledForClasses"} {
		if v, ok := params[k]; ok && v != nil && !isStrings(v) {
			problems = append(problems, k+" must be a list of class names")
		}
	}
	if v, ok := params["classConfigs"]; ok && v != nil {
		list, isList := v.([]any)
		if !isList {
			problems = append(problems, "classConfigs must be a list")
		}
		seen := map[string]bool{}
		for i, item := range list {
			entry, _ := item.(map[string]any)
			name, _ := entry["className"].(string)
			where := fmt.Sprintf("classConfigs[%d]", i)
			switch {
			case entry == nil:
				problems = append(problems, where+" must be an object")
				continue
			case name == "":
				problems = append(problems, where+".className must be a class name")
			case seen[name]:
				problems = append(problems, where+": "+name+" has two entries")
			}
			seen[name] = true
			problems = checkShape(entry, graphQLConfigShape, where, problems)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return schema.Errorf(schema.CodeInvalidJSON, "Invalid graphQLConfig: %s.", strings.Join(problems, "; "))
}

func checkShape(obj map[string]any, shape map[string]any, where string, problems []string) []string {
	for k, v := range obj {
		at := where + "." + k
		want, known := shape[k]
		if !known {
			problems = append(problems, at+" is not a known key")
			continue
		}
		if v == nil {
			continue
		}
		switch w := want.(type) {
		case map[string]any:
			m, ok := v.(map[string]any)
			if !ok {
				problems = append(problems, at+" must be an object")
				continue
			}
			problems = checkShape(m, w, at, problems)
		case string:
			if !hasKind(v, w) {
				problems = append(problems, at+" must be "+kindNames[w])
			}
		}
	}
	return problems
}

var kindNames = map[string]string{"string": "a string", "bool": "a boolean", "strings": "a list of field names",
	"sortFields": "a list of {field, asc, desc}"}

func hasKind(v any, kind string) bool {
	switch kind {
	case "string":
		_, ok := v.(string)
		return ok
	case "bool":
		_, ok := v.(bool)
		return ok
	case "strings":
		return isStrings(v)
	case "sortFields":
		list, ok := v.([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			f, _ := m["field"].(string)
			_, ascOK := m["asc"].(bool)
			_, descOK := m["desc"].(bool)
			if f == "" || !ascOK || !descOK || len(m) != 3 {
				return false
			}
		}
		return ok
	}
	return false
}

func isStrings(v any) bool {
	list, ok := v.([]any)
	for _, x := range list {
		if _, isStr := x.(string); !isStr {
			return false
		}
	}
	return ok
}
