package sqlplan

import (
	"strings"

	"github.com/quarrydata/quarry/where"
)

// memo keeps the answers its Resolver gives while a statement is built,
// so that the residual matcher, compiled after, decides the subqueries
// and relations it holds on the same snapshot without asking again.
type memo struct {
	r       Resolver
	class   string // the queried class (matcher.Resolver.RelationOwners)
	related map[string][]string
	owners  map[string][]string
	inQuery map[*where.Subquery]inAnswer
	selects map[*where.Subquery][]any
}

type inAnswer struct {
	class string
	ids   []string
}

func memoKey(parts ...string) string { return strings.Join(parts, "\x00") }

func (m *memo) RelatedTo(ownerClass, ownerID, key string) ([]string, error) {
	k := memoKey(ownerClass, ownerID, key)
	if ids, ok := m.related[k]; ok {
		return ids, nil
	}
	ids, err := m.r.RelatedTo(ownerClass, ownerID, key)
	if err != nil {
		return nil, err
	}
	if m.related == nil {
		m.related = map[string][]string{}
	}
	m.related[k] = ids
	return ids, nil
}

func (m *memo) RelationOwners(class, key string, relatedIDs []string) ([]string, error) {
	k := memoKey(append([]string{class, key}, relatedIDs...)...)
	if ids, ok := m.owners[k]; ok {
		return ids, nil
	}
	ids, err := m.r.RelationOwners(class, key, relatedIDs)
	if err != nil {
		return nil, err
	}
	if m.owners == nil {
		m.owners = map[string][]string{}
	}
	m.owners[k] = ids
	return ids, nil
}

func (m *memo) InQuery(sub *where.Subquery) (string, []string, error) {
	if a, ok := m.inQuery[sub]; ok {
		return a.class, a.ids, nil
	}
	class, ids, err := m.r.InQuery(sub)
	if err != nil {
		return "", nil, err
	}
	if m.inQuery == nil {
		m.inQuery = map[*where.Subquery]inAnswer{}
	}
	m.inQuery[sub] = inAnswer{class, ids}
	return class, ids, nil
}

func (m *memo) Select(sub *where.Subquery) ([]any, error) {
	if vals, ok := m.selects[sub]; ok {
		return vals, nil
	}
	vals, err := m.r.Select(sub)
	if err != nil {
		return nil, err
	}
	if m.selects == nil {
		m.selects = map[*where.Subquery][]any{}
	}
	m.selects[sub] = vals
	return vals, nil
}

// matcherResolver is a memo as matcher.Resolver, whose RelationOwners
// knows the queried class from the memo's first question.
type matcherResolver struct{ m *memo }

func (r matcherResolver) InQuery(sub *where.Subquery) (string, []string, error) {
	return r.m.InQuery(sub)
}

func (r matcherResolver) Select(sub *where.Subquery) ([]any, error) { return r.m.Select(sub) }

func (r matcherResolver) RelatedTo(ownerClass, ownerID, key string) ([]string, error) {
	return r.m.RelatedTo(ownerClass, ownerID, key)
}

func (r matcherResolver) RelationOwners(key string, relatedIDs []string) ([]string, error) {
	return r.m.RelationOwners(r.m.class, key, relatedIDs)
}
