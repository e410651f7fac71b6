package service

import (
	"encoding/json"
	"fmt"

	"github.com/quarrydata/quarry/schema"
)

// ClassAudience holds push audiences (saved installation queries) that
// Parse Dashboard manages through /push_audiences.
const ClassAudience = "_Audience"

// ClassPushStatus holds one object per push sent through /push.
const ClassPushStatus = "_PushStatus"

// graphQLConfigMeta names the GraphQL configuration in the server settings.
const graphQLConfigMeta = "graphQLConfig"

// GraphQLConfig returns the stored GraphQL configuration ({} when none).
func (s *Service) GraphQLConfig() (map[string]any, error) {
	g := s.GraphQLSettings()
	if g.Err != nil {
		return nil, g.Err
	}
	out := map[string]any{}
	if g.Raw != nil {
		// A copy the caller may keep and change: decoded again.
		if err := json.Unmarshal(g.Raw, &out); err != nil {
			return nil, fmt.Errorf("stored GraphQL config: %w", err)
		}
	}
	return out, nil
}

// SetGraphQLConfig replaces the GraphQL configuration (master key only).
func (s *Service) SetGraphQLConfig(a Auth, params map[string]any) error {
	if !a.Master || a.ReadOnly {
		return schema.Errorf(schema.CodeOperationForbidden, "the GraphQL config can only be changed with the master key")
	}
	for k := range params {
		switch k {
		case "enabledForClasses", "disabledForClasses", "classConfigs":
		default:
			return schema.Errorf(schema.CodeInvalidJSON, "graphql-config: unknown key %q (enabledForClasses, disabledForClasses and classConfigs are known)", k)
		}
	}
	if err := checkGraphQLConfig(params); err != nil {
		return err
	}
	b, err := json.Marshal(params)
	if err != nil {
		return schema.Errorf(schema.CodeInvalidJSON, "graphql-config: %v", err)
	}
	return s.SetMeta(graphQLConfigMeta, b)
}
