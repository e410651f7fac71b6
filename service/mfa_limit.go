package service

import "github.com/quarrydata/quarry/schema"

// clearMFALimit forgets the count of wrong second factors and the lock
// they set (package accounts keeps them at login), when MFA is turned off
// or set up anew.
func clearMFALimit(obj schema.Object) {
	delete(obj, schema.KeyMFAFailedCount)
	delete(obj, schema.KeyMFAFailedSince)
	delete(obj, schema.KeyMFALockedUntil)
}
