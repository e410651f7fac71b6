package service

import (
	"sort"
	"strings"

	"github.com/quarrydata/quarry/schema"
)

// FindParams are a query's parameters, decoded by the transport.
type FindParams struct {
	Where map[string]any
	Order []SortKey
	Limit int // -1 means the default
	Skip  int
	Count bool
	Read  ReadOptions
}

// SortKey is one element of an order list.
type SortKey struct {
	Path string
	Desc bool
}

// ParseOrder reads a comma list such as "-score,name".
func ParseOrder(s string) ([]SortKey, error) {
	var keys []SortKey
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k := SortKey{Path: part}
		if strings.HasPrefix(part, "-") {
			k = SortKey{Path: part[1:], Desc: true}
		}
		root, _, _ := strings.Cut(k.Path, ".")
		if !schema.ValidKeyName(root) && !schema.ReservedKeys[root] && root != "$score" {
			return nil, schema.Errorf(schema.CodeInvalidKeyName, "Invalid field name: %s.", root)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// FindResult is a page of results and, when asked, the total count.
type FindResult struct {
	Results []schema.Object
	Count   int
	Counted bool
}

// MaxSkip bounds skip so a client cannot make the server walk a huge
// class just to throw results away.
const MaxSkip = 1_000_000

func (s *Service) limits(p *FindParams) error {
	if p.Limit < 0 {
		p.Limit = s.opts.DefaultLimit
	}
	if s.opts.MaxLimit > 0 && p.Limit > s.opts.MaxLimit {
		p.Limit = s.opts.MaxLimit
	}
	if p.Skip < 0 {
		return schema.Errorf(schema.CodeInvalidSkip, "Skip must be a non-negative number.")
	}
	if p.Skip > MaxSkip {
		return schema.Errorf(schema.CodeInvalidSkip, "skip may be at most %d", MaxSkip)
	}
	return nil
}

// Find runs a query over a class.
func (s *Service) Find(auth Auth, class string, p FindParams) (FindResult, error) {
	if !schema.ValidClassName(class) {
		return FindResult{}, schema.ClassNameError(class)
	}
	if err := s.limits(&p); err != nil {
		return FindResult{}, err
	}
	match, err := s.compileWhere(class, p.Where)
	if err != nil {
		return FindResult{}, err
	}
	var all []schema.Object
	if c := s.data.Collection(class, false); c != nil {
		c.Scan(func(o schema.Object) bool {
			if match == nil || match(o) {
				all = append(all, o)
			}
			return true
		})
	}
	if len(p.Order) > 0 {
		sort.SliceStable(all, func(i, j int) bool { return lessByOrder(all[i], all[j], p.Order) })
	}
	res := FindResult{Results: []schema.Object{}, Count: len(all), Counted: p.Count}
	for i := p.Skip; i < len(all) && len(res.Results) < p.Limit; i++ {
		res.Results = append(res.Results, s.present(class, all[i], p.Read))
	}
	return res, nil
}

// lessByOrder compares by the order keys, then by objectId so that pages
// are stable.
func lessByOrder(a, b schema.Object, order []SortKey) bool {
	for _, k := range order {
		va, _ := schema.Get(a, k.Path)
		vb, _ := schema.Get(b, k.Path)
		if c := schema.Compare(va, vb); c != 0 {
			return (c < 0) != k.Desc
		}
	}
	ia, _ := a["objectId"].(string)
	ib, _ := b["objectId"].(string)
	return ia < ib
}

// compileWhere is replaced by the planner; until then only an empty where
// is accepted.
func (s *Service) compileWhere(class string, where map[string]any) (func(schema.Object) bool, error) {
	if len(where) == 0 {
		return nil, nil
	}
	return nil, schema.Errorf(schema.CodeInvalidQuery, "where is not supported yet")
}
