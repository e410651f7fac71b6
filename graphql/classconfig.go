package graphql

import (
	"encoding/json"
	"slices"
)

// classConfig is one entry of /graphql-config's classConfigs (Parse
// Server's ParseGraphQLServer names): which fields the class's types show,
// and which root fields it gets, under which names. A nil list means
// every field.
type classConfig struct {
	ClassName string `json:"className"`
	Type      struct {
		InputFields *struct {
			Create []string `json:"create"`
			Update []string `json:"update"`
		} `json:"inputFields"`
		OutputFields     []string    `json:"outputFields"`
		ConstraintFields []string    `json:"constraintFields"`
		SortFields       []sortField `json:"sortFields"`
	} `json:"type"`
	Query struct {
		Get       *bool  `json:"get"`
		Find      *bool  `json:"find"`
		GetAlias  string `json:"getAlias"`
		FindAlias string `json:"findAlias"`
	} `json:"query"`
	Mutation struct {
		Create       *bool  `json:"create"`
		Update       *bool  `json:"update"`
		Destroy      *bool  `json:"destroy"`
		CreateAlias  string `json:"createAlias"`
		UpdateAlias  string `json:"updateAlias"`
		DestroyAlias string `json:"destroyAlias"`
	} `json:"mutation"`
}

type sortField struct {
	Field string `json:"field"`
	Asc   bool   `json:"asc"`
	Desc  bool   `json:"desc"`
}

// classConfigs reads classConfigs by class name; entries that do not
// parse are ignored (the config is the Dashboard's to edit).
func classConfigs(v any) map[string]*classConfig {
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	out := map[string]*classConfig{}
	for _, item := range list {
		b, err := json.Marshal(item)
		if err != nil {
			continue
		}
		var c classConfig
		if json.Unmarshal(b, &c) == nil && c.ClassName != "" {
			out[c.ClassName] = &c
		}
	}
	return out
}

// allowed reports whether a field name is in a list, nil allowing all.
func allowed(list []string, name string) bool { return list == nil || slices.Contains(list, name) }

func enabled(flag *bool) bool { return flag == nil || *flag }

func orName(alias, name string) string {
	if alias != "" {
		return alias
	}
	return name
}

// shows says whether the class type shows field (outputFields).
func (c *classConfig) shows(field string) bool {
	return c == nil || allowed(c.Type.OutputFields, field)
}

// takes says whether a create (or an update) input takes field.
func (c *classConfig) takes(field string, update bool) bool {
	if c == nil || c.Type.InputFields == nil {
		return true
	}
	if update {
		return allowed(c.Type.InputFields.Update, field)
	}
	return allowed(c.Type.InputFields.Create, field)
}

// constrains says whether the where input offers field.
func (c *classConfig) constrains(field string) bool {
	return c == nil || allowed(c.Type.ConstraintFields, field)
}

// sorts lists the order enum's values for the fields that may sort.
func (c *classConfig) sorts(fields []string) []string {
	var out []string
	if c == nil || c.Type.SortFields == nil {
		for _, f := range fields {
			out = append(out, f+"_ASC", f+"_DESC")
		}
		return out
	}
	for _, s := range c.Type.SortFields {
		if !slices.Contains(fields, s.Field) {
			continue
		}
		if s.Asc {
			out = append(out, s.Field+"_ASC")
		}
		if s.Desc {
			out = append(out, s.Field+"_DESC")
		}
	}
	return out
}

// rootNames are the class's root field names, "" for one turned off.
type rootNames struct{ get, find, create, update, delete string }

func (c *classConfig) roots(cm *classModel) rootNames {
	r := rootNames{cm.single, plural(cm.single), "create" + cm.typ, "update" + cm.typ, "delete" + cm.typ}
	if c == nil {
		return r
	}
	pick := func(on *bool, alias, name string) string {
		if !enabled(on) {
			return ""
		}
		return orName(alias, name)
	}
	q, m := c.Query, c.Mutation
	return rootNames{pick(q.Get, q.GetAlias, r.get), pick(q.Find, q.FindAlias, r.find),
		pick(m.Create, m.CreateAlias, r.create), pick(m.Update, m.UpdateAlias, r.update), pick(m.Destroy, m.DestroyAlias, r.delete)}
}
