package sqlplan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/store"
)

// Page is a find's answer on a class kept out of memory.
type Page struct {
	Objects []schema.Object
	// Count is the number of matching objects, when asked.
	Count int
	// Examined is the number of rows read: the page when SQL answers
	// exactly, every row Go tested otherwise.
	Examined int
}

// errPageFull stops a prefilter's rows once the page is complete.
var errPageFull = errors.New("sqlplan: page complete")

// Run answers st on class through qr: in SQL alone when it is exact; else
// the prefilter's rows stream through the residual matcher, are sorted in
// Go when SQL cannot order them (keeping at most about twice skip+limit
// in memory), and Go cuts the page and counts. maxScan > 0 caps the rows
// Go examines: one more is refused with 154, however the estimate went.
func (st *Statement) Run(ctx context.Context, qr store.Querier, class string, count bool, maxScan int) (Page, error) {
	page := Page{Objects: []schema.Object{}}
	if st.Exact() {
		return page, st.runExact(ctx, qr, class, count, &page)
	}
	need := -1 // the matching rows to keep: skip+limit, or all
	if st.Limit >= 0 {
		need = st.Skip + st.Limit
	}
	if need == 0 && !count {
		return page, nil
	}
	var kept []schema.Object
	matched := 0
	sortKept := func() {
		slices.SortFunc(kept, func(a, b schema.Object) int { return matcher.Compare(a, b, st.Order) })
		if need >= 0 && len(kept) > need {
			clear(kept[need:])
			kept = kept[:need]
		}
	}
	sel := st.Select
	if st.Order == nil && !count && need > 0 {
		// The rows come in order and the stream may stop at any row:
		// a cursor leaves the rest unproduced.
		sel.Batch = 2*need + 16
	}
	err := qr.Select(ctx, class, sel, func(id string, raw []byte) error {
		page.Examined++
		if maxScan > 0 && page.Examined > maxScan {
			return schema.Errorf(schema.CodeInefficientQuery,
				"This query on %s examined more than maxScan %d objects in Go, where PostgreSQL could not decide its where or order exactly. Add an index on a constrained field or narrow the query with an indexed constraint.",
				class, maxScan)
		}
		var obj schema.Object
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("%w: object %s/%s is not valid JSON", store.ErrDamaged, class, id)
		}
		if !st.match.Match(obj) {
			return nil
		}
		matched++
		switch {
		case need == 0:
		case st.Order != nil:
			kept = append(kept, obj)
			if need > 0 && len(kept) >= 2*need+64 {
				sortKept()
			}
		case need < 0 || len(kept) < need:
			kept = append(kept, obj)
		}
		if st.Order == nil && !count && len(kept) == need {
			return errPageFull // the rows come in order: the rest is not needed
		}
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		return Page{}, err
	}
	if st.Order != nil {
		sortKept()
	}
	if st.Skip < len(kept) {
		page.Objects = append(page.Objects, kept[st.Skip:]...)
	}
	page.Count = matched
	return page, nil
}

// runExact reads the page and the count SQL answers whole.
func (st *Statement) runExact(ctx context.Context, qr store.Querier, class string, count bool, page *Page) error {
	if st.Select.Limit != 0 {
		err := qr.Select(ctx, class, st.Select, func(id string, raw []byte) error {
			var obj schema.Object
			if err := json.Unmarshal(raw, &obj); err != nil {
				return fmt.Errorf("%w: object %s/%s is not valid JSON", store.ErrDamaged, class, id)
			}
			page.Objects = append(page.Objects, obj)
			return nil
		})
		if err != nil {
			return err
		}
		page.Examined = len(page.Objects)
	}
	if count {
		n, err := qr.Count(ctx, class, st.Select)
		if err != nil {
			return err
		}
		page.Count = n
	}
	return nil
}

// Prefilter is the statement whose rows the query may read: the whole
// prefilter when Go finishes the query (the residual may reject every
// row, and Go's order needs them all), for CheckBudget.
func (st *Statement) Prefilter() store.Select {
	if st.Exact() {
		return st.Select
	}
	sel := st.Select
	sel.OrderBy, sel.OrderArgs, sel.Limit, sel.Offset = "", nil, -1, 0
	return sel
}
