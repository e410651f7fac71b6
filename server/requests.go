package server

import (
	"log/slog"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/declare"
	"github.com/quarrydata/quarry/service"
)

// applySchemaOption brings the schema option's declared classes up to
// date before the server listens; with strict a failure stops the start.
func applySchemaOption(opts *config.Options, svc *service.Service, log *slog.Logger) error {
	if opts.Schema == nil {
		return nil
	}
	err := declare.Apply(svc, opts.SchemaDefinitions(), declare.Options{
		Strict:                 opts.SchemaSwitch("strict"),
		DeleteExtraFields:      opts.SchemaSwitch("deleteExtraFields"),
		RecreateModifiedFields: opts.SchemaSwitch("recreateModifiedFields"),
	}, log)
	if opts.SchemaSwitch("strict") {
		return err
	}
	return nil
}

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

// warnDatabaseOptions names the databaseOptions keys Quarry ignores.
func warnDatabaseOptions(opts *config.Options, log *slog.Logger) {
	for _, k := range opts.IgnoredDatabaseOptions() {
		log.Warn("databaseOptions." + k + ": ignored (no meaning here: a setting of Parse Server's database clients)")
	}
}
