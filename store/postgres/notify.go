package postgres

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Each change's NOTIFY carries the change: "<id> <origin> <records in
// base64>", or "<id>" alone when the records would not fit in a payload.
// PostgreSQL delivers notifications in commit order, and commits append
// to _changes in id order under the commit lock, so a follower whose
// notification holds the change right after its position applies it at
// once: no read of _changes, whose round trip was most of the follow lag
// (docs/scaling.md). Anything else (a change too large, an id no commit
// used, a notification from an older instance, a reconnect) sends it back
// to reading _changes from its position, which never misses a change.

// maxCarried bounds the records a notification carries: base64 makes
// them a third longer, and a payload must stay under PostgreSQL's 8000
// bytes with the id and the origin.
const maxCarried = 5600

// notifyTail is what follows the change id in its notification.
func notifyTail(origin string, records []byte) string {
	if len(records) > maxCarried {
		return ""
	}
	return " " + origin + " " + base64.StdEncoding.EncodeToString(records)
}

// carried is the change a notification payload carries, if it does.
func (f *follower) carried(payload string) (c changeRow, id int64, ok bool) {
	head, rest, _ := strings.Cut(payload, " ")
	id, err := strconv.ParseInt(head, 10, 64)
	if err != nil {
		return changeRow{}, 0, false
	}
	origin, encoded, found := strings.Cut(rest, " ")
	if !found {
		return changeRow{}, id, false
	}
	records, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return changeRow{}, id, false
	}
	return changeRow{id: id, foreign: origin != f.a.origin, records: records}, id, true
}

// takeCarried waits for notifications and hands over the changes they
// carry while each is the one after f.pos; it returns when the follower
// must read _changes instead.
func (f *follower) takeCarried(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		c, id, ok := f.carried(n.Payload)
		switch {
		case id != 0 && id <= f.pos:
			continue // read already, with an earlier notification's catch-up
		case !ok || id != f.pos+1:
			return nil
		}
		if err := f.handOver(c); err != nil {
			return err
		}
	}
}
