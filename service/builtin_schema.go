package service

import "github.com/quarrydata/quarry/schema"

// EnsureBuiltinSchema gives a built-in class its default fields, so that
// their types are locked before clients write to it.
func (s *Service) EnsureBuiltinSchema(class string) error {
	complete := func(c *schema.Class) bool {
		if c == nil {
			return false
		}
		for k := range schema.BuiltinFields(class) {
			if _, ok := c.Fields[k]; !ok {
				return false
			}
		}
		return true
	}
	if complete(s.Class(class)) {
		return nil
	}
	defer s.announceSchemas() // after the unlock
	s.lockSchema(class)
	defer s.schemaMu.Unlock()
	cur := s.Class(class)
	if complete(cur) {
		return nil
	}
	var next *schema.Class
	if cur == nil {
		next = s.newClass(class)
	} else {
		next = cur.Clone()
		for k, f := range schema.BuiltinFields(class) {
			if _, ok := next.Fields[k]; !ok {
				next.Fields[k] = f
			}
		}
	}
	return s.storeClass(next)
}
