package accounts

import (
	"github.com/quarrydata/quarry/schema"
)

// ExtendSession moves a session's expiry to a full sessionLength from now
// once less than half of it is left (extendSessionOnUse; the server
// registers it with the core's OnSessionUse): a session in steady use
// never expires, and a busy client costs one write per half life, not one
// per request. The request that finds the session past half its life
// writes the new expiry before it goes on (once per half life); requests
// arriving meanwhile do not wait for it.
func (x *Accounts) ExtendSession(sess schema.Object, expiresISO string) {
	length := x.core.SessionLength()
	exp, ok := schema.ParseTime(expiresISO)
	now := x.core.Now()
	if !ok || exp.Sub(now) >= length/2 {
		return
	}
	id, _ := sess["objectId"].(string)
	if _, busy := x.extending.LoadOrStore(id, true); busy {
		return
	}
	defer x.extending.Delete(id)
	if err := x.core.SetSessionExpiry(id, now.Add(length)); err != nil {
		x.core.Warn("extendSessionOnUse: the session's expiry was not moved: " + err.Error())
	}
}
