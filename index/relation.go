package index

import (
	"github.com/tidwall/btree"
)

type relationKey struct{ owningClass, key string }

// firstMemberBatch is the size of the first batch of ids members reads.
const firstMemberBatch = 32

// relation holds one relation key's memberships as ordered pairs, once per
// direction: forward (owning id, related id) and reverse (related id, owning
// id). The members of one id are a contiguous run of its tree.
type relation struct {
	forward, reverse *btree.BTreeG[pair]
}

type pair struct{ from, to string }

func lessPair(a, b pair) bool {
	if a.from != b.from {
		return a.from < b.from
	}
	return a.to < b.to
}

func newPairTree() *btree.BTreeG[pair] {
	return btree.NewBTreeGOptions(lessPair, btree.Options{NoLocks: true})
}

// SetRelation adds (present) or removes a membership of relatedID in the
// relation key of owningClass/owningID.
func (db *DB) SetRelation(owningClass, key, owningID, relatedID string, present bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	rk := relationKey{owningClass, key}
	r := db.relations[rk]
	if r == nil {
		if !present {
			return
		}
		r = &relation{forward: newPairTree(), reverse: newPairTree()}
		db.relations[rk] = r
	}
	if present {
		r.forward.Set(pair{owningID, relatedID})
		r.reverse.Set(pair{relatedID, owningID})
		return
	}
	r.forward.Delete(pair{owningID, relatedID})
	r.reverse.Delete(pair{relatedID, owningID})
	if r.forward.Len() == 0 {
		delete(db.relations, rk)
	}
}

// Related calls fn with every related id in owningClass/owningID's relation
// key, in id order, until fn returns false. Ids are read in batches under the
// read lock and fn runs without it, so fn may change relations; a concurrent
// change may or may not be seen, and no id is delivered twice.
func (db *DB) Related(owningClass, key, owningID string, fn func(relatedID string) bool) {
	db.members(relationKey{owningClass, key}, false, owningID, fn)
}

// Owners calls fn with every owning id whose relation key contains
// relatedID, in id order, until fn returns false; as Related.
func (db *DB) Owners(owningClass, key, relatedID string, fn func(owningID string) bool) {
	db.members(relationKey{owningClass, key}, true, relatedID, fn)
}

// RelatedCount is the number of related ids in owningClass/owningID's
// relation key, in O(log² n).
func (db *DB) RelatedCount(owningClass, key, owningID string) int {
	return db.count(relationKey{owningClass, key}, false, owningID)
}

// OwnersCount is the number of owning ids whose relation key contains
// relatedID, in O(log² n).
func (db *DB) OwnersCount(owningClass, key, relatedID string) int {
	return db.count(relationKey{owningClass, key}, true, relatedID)
}

func (r *relation) tree(reverse bool) *btree.BTreeG[pair] {
	if reverse {
		return r.reverse
	}
	return r.forward
}

func (db *DB) members(rk relationKey, reverse bool, from string, fn func(string) bool) {
	// Batches start small and grow: most readers (a page of a $relatedTo)
	// stop after a few ids.
	size := firstMemberBatch
	var buf []string
	after := "" // the smallest id not yet delivered
	for {
		buf = buf[:0]
		db.mu.RLock()
		if r := db.relations[rk]; r != nil {
			r.tree(reverse).Ascend(pair{from, after}, func(p pair) bool {
				if p.from != from {
					return false
				}
				buf = append(buf, p.to)
				return len(buf) < size
			})
		}
		db.mu.RUnlock()
		for _, id := range buf {
			if !fn(id) {
				return
			}
		}
		if len(buf) < size {
			return
		}
		size = min(2*size, batchSize)
		// The smallest string after the last id delivered.
		after = buf[len(buf)-1] + "\x00"
	}
}

func (db *DB) count(rk relationKey, reverse bool, from string) int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	r := db.relations[rk]
	if r == nil {
		return 0
	}
	t := r.tree(reverse)
	// from+"\x00" is the smallest string after from: the run of from's
	// pairs ends just before it.
	return rank(t, pair{from + "\x00", ""}) - rank(t, pair{from, ""})
}
