package server

import (
	"github.com/quarrydata/quarry/service"
)

// denylist turns requestKeywordDenylist (validated by config) into the
// service's entries; nil stays nil (Parse Server's default).
func denylist(entries []map[string]any) []service.DeniedKeyword {
	if entries == nil {
		return nil
	}
	out := make([]service.DeniedKeyword, 0, len(entries))
	for _, e := range entries {
		var d service.DeniedKeyword
		if k, ok := e["key"].(string); ok {
			d.Key, d.HasKey = k, true
		}
		d.Value, d.HasValue = e["value"]
		out = append(out, d)
	}
	return out
}
