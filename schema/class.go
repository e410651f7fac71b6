package schema

// Class is the persisted schema of one class: its locked field types,
// class-level permissions and declared indexes.
type Class struct {
	Name    string           `json:"className"`
	Fields  map[string]Field `json:"fields"`
	CLP     map[string]any   `json:"classLevelPermissions,omitempty"`
	Indexes map[string]any   `json:"indexes,omitempty"`
}

// NewClass returns a class holding only the default fields.
func NewClass(name string) *Class {
	c := &Class{Name: name, Fields: map[string]Field{}}
	for k, f := range defaultFields {
		c.Fields[k] = f
	}
	return c
}

// Clone copies c deeply enough that adding fields to the copy leaves c alone.
func (c *Class) Clone() *Class {
	out := &Class{Name: c.Name, Fields: make(map[string]Field, len(c.Fields)), CLP: c.CLP, Indexes: c.Indexes}
	for k, f := range c.Fields {
		out.Fields[k] = f
	}
	return out
}
