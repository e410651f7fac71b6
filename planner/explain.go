package planner

// Describing: Explain and Summary report a compiled plan.

import (
	"fmt"
)

// Explain describes the chosen plan for the master key's explain option.
func (pl *Plan) Explain(res Result) map[string]any {
	if pl.filler != nil {
		pl.filler.fillSets(pl.root)
	}
	out := map[string]any{
		"class":    pl.q.Class,
		"where":    pl.root.String(),
		"residual": pl.residual.String(),
		"access":   pl.access.String(),
		"reason":   pl.access.reason(),
		"estimate": pl.access.estimate,
		"examined": res.Examined,
		"matched":  res.Count,
	}
	out["sort"] = pl.sortText()
	return out
}

// sortText says how the plan orders its results.
func (pl *Plan) sortText() string {
	switch {
	case len(pl.q.Order) == 0 && pl.near != nil:
		return "by distance (top-k heap)"
	case len(pl.q.Order) == 0 && (pl.streaming() || pl.idOrdered(pl.access)):
		return "objectId (access order)"
	case len(pl.q.Order) == 0:
		return "objectId (top-k heap)"
	case pl.orderIndex:
		return "index " + pl.q.Order[0].Path
	}
	return "top-k heap"
}

// Summary is the plan in one line for a slow-query log: the class, the
// access with its reason and estimate, and the sort. It names fields and
// indexes but never a value of the query, so it can be logged.
func (pl *Plan) Summary() string {
	return fmt.Sprintf("class %s: %s (%s; estimate %d), sort %s",
		pl.q.Class, pl.access.String(), pl.access.reason(), pl.access.estimate, pl.sortText())
}
