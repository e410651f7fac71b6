package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tidwall/buntdb"
)

// journalKey holds, between two transactions of one commit group, the
// records of the group's multi-record requests. Its first byte is no Kind,
// so it never meets a record key; Load skips it.
const journalKey = "\x01journal"

// appendJournal encodes the records of every request of group that holds
// more than one record (a lone record is one buntdb command, atomic by
// itself). Per record: Kind, uvarint len(Class), Class, uvarint len(Key),
// Key, then uvarint 0 for a delete or len(Value)+1 followed by Value.
func appendJournal(buf []byte, group []*commitReq) []byte {
	for _, r := range group {
		if len(r.records) < 2 {
			continue
		}
		for _, rec := range r.records {
			buf = append(buf, byte(rec.Kind))
			buf = binary.AppendUvarint(buf, uint64(len(rec.Class)))
			buf = append(buf, rec.Class...)
			buf = binary.AppendUvarint(buf, uint64(len(rec.Key)))
			buf = append(buf, rec.Key...)
			if rec.Value == nil {
				buf = binary.AppendUvarint(buf, 0)
				continue
			}
			buf = binary.AppendUvarint(buf, uint64(len(rec.Value))+1)
			buf = append(buf, rec.Value...)
		}
	}
	return buf
}

var errBadJournal = errors.New("store: corrupt journal")

// decodeJournal is the inverse of appendJournal.
func decodeJournal(s string) ([]Record, error) {
	b := []byte(s)
	str := func() (string, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return "", false
		}
		v := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return v, true
	}
	var recs []Record
	for len(b) > 0 {
		r := Record{Kind: Kind(b[0])}
		b = b[1:]
		var ok1, ok2 bool
		r.Class, ok1 = str()
		r.Key, ok2 = str()
		n, w := binary.Uvarint(b)
		if !ok1 || !ok2 || w <= 0 || n > uint64(len(b)-w)+1 {
			return nil, errBadJournal
		}
		b = b[w:]
		if n > 0 {
			r.Value = append([]byte{}, b[:n-1]...)
			b = b[n-1:]
		}
		recs = append(recs, r)
	}
	if _, err := checkRecordsOf(recs, true); err != nil {
		return nil, fmt.Errorf("%w: %w", errBadJournal, err)
	}
	return recs, nil
}

// recoverJournal finishes the commit group a crash interrupted: the
// journal's records are applied again (sets and deletes are idempotent),
// then the journal is deleted, in two transactions so that another crash
// in between is recovered the same way. It reports whether it wrote.
func recoverJournal(db *buntdb.DB) (bool, error) {
	var j string
	err := db.View(func(tx *buntdb.Tx) error {
		var err error
		j, err = tx.Get(journalKey)
		return err
	})
	if errors.Is(err, buntdb.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	recs, err := decodeJournal(j)
	if err != nil {
		return false, err
	}
	err = db.Update(func(tx *buntdb.Tx) error { return applyRecords(tx, recs) })
	if err != nil {
		return false, err
	}
	err = db.Update(func(tx *buntdb.Tx) error {
		_, err := tx.Delete(journalKey)
		return err
	})
	return true, err
}
