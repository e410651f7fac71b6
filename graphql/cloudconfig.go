package graphql

import (
	"encoding/json"

	"github.com/quarrydata/quarry/schema"
)

// Parse Config through GraphQL, as Parse Server offers it: the query
// cloudConfig(paramName) reads one parameter and the mutation
// updateCloudConfig sets one, both with the master key only. Values are
// GraphQL Strings: a parameter set through REST as a number or boolean
// reads as its text, an object or array as its JSON.

// cloudConfigSDL is the fixed schema's part for Parse Config.
const cloudConfigSDL = `
type ConfigValue {
  value: String
  isMasterKeyOnly: Boolean
}

input UpdateCloudConfigInput {
  paramName: String!
  value: String!
  isMasterKeyOnly: Boolean = false
  clientMutationId: String
}

type UpdateCloudConfigPayload {
  cloudConfig: ConfigValue!
  clientMutationId: String
}
`

// cloudConfig answers the cloudConfig query: the parameter's value and
// master-only flag, both null for a parameter that is not set.
func (e *executor) cloudConfig(name string) (any, error) {
	if !e.auth.Master {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "Master Key is required to access GlobalConfig.")
	}
	cfg := e.h.svc.Config(e.auth)
	params, _ := cfg["params"].(map[string]any)
	v, ok := params[name]
	if !ok {
		return map[string]any{"value": nil, "isMasterKeyOnly": nil}, nil
	}
	flags, _ := cfg["masterKeyOnly"].(map[string]any)
	return map[string]any{"value": configText(v), "isMasterKeyOnly": flags[name]}, nil
}

// configText is a parameter's value as a GraphQL String.
func configText(v any) any {
	switch v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		return string(b)
	}
	return v
}

// updateCloudConfig sets one parameter and its master-only flag (false
// unless given) through the same update as PUT /config.
func (e *executor) updateCloudConfig(input map[string]any) (map[string]any, error) {
	if !e.auth.Master {
		return nil, schema.Errorf(schema.CodeOperationForbidden, "Master Key is required to update GlobalConfig.")
	}
	name := str(input["paramName"])
	masterOnly, _ := input["isMasterKeyOnly"].(bool)
	body := map[string]any{
		"params":        map[string]any{name: input["value"]},
		"masterKeyOnly": map[string]any{name: masterOnly},
	}
	if err := e.h.svc.UpdateConfig(e.auth, body); err != nil {
		return nil, err
	}
	return map[string]any{"cloudConfig": map[string]any{"value": input["value"], "isMasterKeyOnly": masterOnly}}, nil
}
