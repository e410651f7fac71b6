package schema

import (
	"iter"
	"maps"
)

// The tables of names and fields the server itself defines. They are
// unexported so no package can change them; the functions below read them.

// builtinClasses are the underscore classes clients may address through
// their own routes or /classes.
var builtinClasses = map[string]bool{
	"_User": true, "_Role": true, "_Installation": true, "_Session": true, "_Audience": true,
	"_Idempotency": true, "_JobStatus": true, "_JobSchedule": true, "_PushStatus": true, "_Hooks": true,
	"_Subscription": true,
}

// defaultFields are the fields every class has.
var defaultFields = map[string]Field{
	"objectId":  {Type: TypeString},
	"createdAt": {Type: TypeDate},
	"updatedAt": {Type: TypeDate},
	"ACL":       {Type: TypeACL},
}

// builtinClassFields are the default fields of the built-in classes beyond
// the four every class has (objectId, createdAt, updatedAt, ACL). The
// schemas API shows them and refuses to add or delete them.
var builtinClassFields = map[string]map[string]Field{
	"_User": {
		"username":      {Type: TypeString},
		"password":      {Type: TypeString},
		"email":         {Type: TypeString},
		"emailVerified": {Type: TypeBoolean},
		"authData":      {Type: TypeObject},
	},
	"_Installation": {
		"installationId":   {Type: TypeString},
		"deviceToken":      {Type: TypeString},
		"channels":         {Type: TypeArray},
		"deviceType":       {Type: TypeString},
		"pushType":         {Type: TypeString},
		"GCMSenderId":      {Type: TypeString},
		"timeZone":         {Type: TypeString},
		"localeIdentifier": {Type: TypeString},
		"badge":            {Type: TypeNumber},
		"appVersion":       {Type: TypeString},
		"appName":          {Type: TypeString},
		"appIdentifier":    {Type: TypeString},
		"parseVersion":     {Type: TypeString},
	},
	"_Role": {
		"name":  {Type: TypeString},
		"users": {Type: TypeRelation, TargetClass: "_User"},
		"roles": {Type: TypeRelation, TargetClass: "_Role"},
	},
	"_Audience": {
		"name":      {Type: TypeString},
		"query":     {Type: TypeString},
		"lastUsed":  {Type: TypeDate},
		"timesUsed": {Type: TypeNumber},
	},
	"_Idempotency": {
		"reqId":  {Type: TypeString},
		"expire": {Type: TypeDate},
	},
	"_JobStatus": {
		"jobName":    {Type: TypeString},
		"source":     {Type: TypeString},
		"status":     {Type: TypeString},
		"message":    {Type: TypeString},
		"params":     {Type: TypeObject},
		"finishedAt": {Type: TypeDate},
	},
	"_JobSchedule": {
		"jobName":       {Type: TypeString},
		"description":   {Type: TypeString},
		"params":        {Type: TypeString},
		"startAfter":    {Type: TypeString},
		"daysOfWeek":    {Type: TypeArray},
		"timeOfDay":     {Type: TypeString},
		"lastRun":       {Type: TypeNumber},
		"repeatMinutes": {Type: TypeNumber},
	},
	"_PushStatus": {
		"pushTime":            {Type: TypeString},
		"source":              {Type: TypeString},
		"query":               {Type: TypeString},
		"payload":             {Type: TypeString},
		"title":               {Type: TypeString},
		"expiry":              {Type: TypeNumber},
		"expiration_interval": {Type: TypeNumber},
		"status":              {Type: TypeString},
		"numSent":             {Type: TypeNumber},
		"numFailed":           {Type: TypeNumber},
		"pushHash":            {Type: TypeString},
		"errorMessage":        {Type: TypeObject},
		"sentPerType":         {Type: TypeObject},
		"failedPerType":       {Type: TypeObject},
		"sentPerUTCOffset":    {Type: TypeObject},
		"failedPerUTCOffset":  {Type: TypeObject},
		"count":               {Type: TypeNumber},
	},
	"_Subscription": {
		"name":        {Type: TypeString},
		"className":   {Type: TypeString},
		"where":       {Type: TypeString}, // JSON: an object field may not hold $ keys
		"keys":        {Type: TypeArray},
		"events":      {Type: TypeArray},
		"target":      {Type: TypeObject},
		"pending":     {Type: TypeArray},
		"lastEventId": {Type: TypeString},
	},
	"_Hooks": {
		"functionName": {Type: TypeString},
		"className":    {Type: TypeString},
		"triggerName":  {Type: TypeString},
		"url":          {Type: TypeString},
	},
	"_Session": {
		"user":           {Type: TypePointer, TargetClass: "_User"},
		"installationId": {Type: TypeString},
		"sessionToken":   {Type: TypeString},
		"expiresAt":      {Type: TypeDate},
		"createdWith":    {Type: TypeObject},
	},
}

// forbiddenFieldNames are names Parse refuses for a field although they are
// well-formed: "length" makes a Parse object look like an array to the
// JavaScript SDK and to Parse Server's own code.
var forbiddenFieldNames = map[string]bool{"length": true}

// reservedKeys are top-level keys the server owns.
var reservedKeys = map[string]bool{"objectId": true, "createdAt": true, "updatedAt": true}

// IsBuiltinClass reports whether name is a built-in underscore class
// clients may address.
func IsBuiltinClass(name string) bool { return builtinClasses[name] }

// DefaultFields yields the fields every class has.
func DefaultFields() iter.Seq2[string, Field] { return maps.All(defaultFields) }

// DefaultField is one of the fields every class has.
func DefaultField(name string) (Field, bool) {
	f, ok := defaultFields[name]
	return f, ok
}

// BuiltinFields yields a built-in class's own default fields beyond the
// four every class has; nothing for other classes.
func BuiltinFields(class string) iter.Seq2[string, Field] { return maps.All(builtinClassFields[class]) }

// BuiltinField is one of a built-in class's own default fields.
func BuiltinField(class, name string) (Field, bool) {
	f, ok := builtinClassFields[class][name]
	return f, ok
}

// IsReservedKey reports whether key is a top-level key the server owns
// (objectId, createdAt, updatedAt).
func IsReservedKey(key string) bool { return reservedKeys[key] }

// IsForbiddenFieldName reports whether Parse refuses name for a field
// although it is well-formed.
func IsForbiddenFieldName(name string) bool { return forbiddenFieldNames[name] }
