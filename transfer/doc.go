// Package transfer moves whole databases into and out of a Quarry store:
// it reads what Parse Server operators have (mongoexport JSON, mongodump
// BSON, Parse Dashboard's JSON export, a Parse Server PostgreSQL database
// read directly), copies the bytes of their files from the old server's
// files into a files adapter, writes Dashboard-shaped or mongoexport-shaped
// exports, and takes consistent snapshots of a live data file for backup
// and restore.
//
// It writes store records directly, in batches, into a store no server has
// open; it never imports service, transport or server. Of Quarry's
// packages it imports schema, store and files only.
package transfer
