package matcher_test

import (
	"testing"

	"github.com/quarrydata/quarry/matcher"
)

// opCase is one where tested against one object. The expectations are
// MongoDB's (Parse Server on MongoDB), except where a comment says why
// Quarry differs.
type opCase struct {
	name   string
	where  string
	object string
	want   bool
}

// Values of each type, used across the tables.
const (
	ptrA1  = `{"__type":"Pointer","className":"A","objectId":"1"}`
	objA1  = `{"__type":"Object","className":"A","objectId":"1","name":"n"}`
	ptrB1  = `{"__type":"Pointer","className":"B","objectId":"1"}`
	ptrA2  = `{"__type":"Pointer","className":"A","objectId":"2"}`
	gp11   = `{"__type":"GeoPoint","latitude":1,"longitude":1}`
	gp22   = `{"__type":"GeoPoint","latitude":2,"longitude":2}`
	bytesA = `{"__type":"Bytes","base64":"AAE="}`
	bytesB = `{"__type":"Bytes","base64":"AAI="}`
	fileX1 = `{"__type":"File","name":"x.txt","url":"http://one/x.txt"}`
	fileX2 = `{"__type":"File","name":"x.txt","url":"http://two/x.txt"}`
	fileY  = `{"__type":"File","name":"y.txt","url":"http://one/y.txt"}`
	date2Z = `{"__type":"Date","iso":"2024-01-02T00:00:00Z"}` // d0102 in another spelling
	date03 = `{"__type":"Date","iso":"2024-01-03T00:00:00.000Z"}`
)

// eqCases: implicit equality and $eq for every value type, against the
// same and other types, arrays (array-contains), null and missing.
var eqCases = []opCase{
	{"string equal", `{"a":"x"}`, `{"a":"x"}`, true},
	{"string case differs", `{"a":"x"}`, `{"a":"X"}`, false},
	{"string vs number", `{"a":"1"}`, `{"a":1}`, false},
	{"string in array", `{"a":"x"}`, `{"a":["y","x"]}`, true},
	{"string not in array", `{"a":"x"}`, `{"a":["y"]}`, false},
	{"string vs missing", `{"a":"x"}`, `{}`, false},
	{"string vs null", `{"a":"x"}`, `{"a":null}`, false},
	{"empty string vs missing", `{"a":""}`, `{}`, false},
	{"number equal", `{"a":1}`, `{"a":1}`, true},
	{"int equals float", `{"a":1}`, `{"a":1.0}`, true},
	{"float equals int", `{"a":2.0}`, `{"a":2}`, true},
	{"fraction", `{"a":1.5}`, `{"a":1.5}`, true},
	{"fraction differs", `{"a":1.5}`, `{"a":1}`, false},
	{"zero equals negative zero", `{"a":0}`, `{"a":-0.0}`, true},
	{"number vs string", `{"a":1}`, `{"a":"1"}`, false},
	{"number vs bool", `{"a":1}`, `{"a":true}`, false},
	{"zero vs false", `{"a":0}`, `{"a":false}`, false},
	{"number in array", `{"a":1}`, `{"a":[3,1]}`, true},
	{"number vs nested array", `{"a":1}`, `{"a":[[1]]}`, false},
	{"bool equal", `{"a":true}`, `{"a":true}`, true},
	{"bool differs", `{"a":true}`, `{"a":false}`, false},
	{"bool vs string", `{"a":true}`, `{"a":"true"}`, false},
	{"bool in array", `{"a":false}`, `{"a":[true,false]}`, true},
	{"false vs missing", `{"a":false}`, `{}`, false},
	{"date equal", `{"d":` + d0102 + `}`, `{"d":` + d0102 + `}`, true},
	{"date other spelling", `{"d":` + date2Z + `}`, `{"d":` + d0102 + `}`, true},
	{"date differs", `{"d":` + d0102 + `}`, `{"d":` + d0101 + `}`, false},
	{"date vs iso string on a plain field", `{"d":` + d0102 + `}`, `{"d":"2024-01-02T00:00:00.000Z"}`, false},
	{"date in array", `{"x":` + d0102 + `}`, `{"x":[` + d0101 + `,` + d0102 + `]}`, true},
	{"createdAt date vs stored string", `{"createdAt":` + d0102 + `}`, `{"createdAt":"2024-01-02T00:00:00.000Z"}`, true},
	{"createdAt iso vs stored string", `{"createdAt":"2024-01-02T00:00:00Z"}`, `{"createdAt":"2024-01-02T00:00:00.000Z"}`, true},
	{"updatedAt iso differs", `{"updatedAt":"2024-01-02T00:00:00.000Z"}`, `{"updatedAt":"2024-01-02T00:00:00.001Z"}`, false},
	{"createdAt text that is no date", `{"createdAt":"yesterday"}`, `{"createdAt":"2024-01-02T00:00:00.000Z"}`, false},
	{"$ne createdAt iso", `{"createdAt":{"$ne":"2024-01-02T00:00:00Z"}}`, `{"createdAt":"2024-01-02T00:00:00.000Z"}`, false},
	{"updatedAt date vs stored date", `{"updatedAt":` + d0101 + `}`, `{"updatedAt":` + d0101 + `}`, true},
	{"pointer equal", `{"p":` + ptrA1 + `}`, `{"p":` + ptrA1 + `}`, true},
	{"pointer vs expanded object", `{"p":` + ptrA1 + `}`, `{"p":` + objA1 + `}`, true},
	{"expanded object in where vs pointer", `{"p":` + objA1 + `}`, `{"p":` + ptrA1 + `}`, true},
	{"pointer other class", `{"p":` + ptrA1 + `}`, `{"p":` + ptrB1 + `}`, false},
	{"pointer other id", `{"p":` + ptrA1 + `}`, `{"p":` + ptrA2 + `}`, false},
	{"pointer vs id string", `{"p":` + ptrA1 + `}`, `{"p":"1"}`, false},
	{"pointer vs plain object with same keys", `{"p":` + ptrA1 + `}`, `{"p":{"className":"A","objectId":"1"}}`, false},
	{"pointer in array", `{"p":` + ptrA1 + `}`, `{"p":[` + ptrA2 + `,` + ptrA1 + `]}`, true},
	{"array equal", `{"a":[1,"x"]}`, `{"a":[1,"x"]}`, true},
	{"array order matters", `{"a":[1,"x"]}`, `{"a":["x",1]}`, false},
	{"array prefix", `{"a":[1]}`, `{"a":[1,2]}`, false},
	{"array inside array", `{"a":[1,2]}`, `{"a":[[1,2],3]}`, true},
	{"empty array", `{"a":[]}`, `{"a":[]}`, true},
	{"empty array vs missing", `{"a":[]}`, `{}`, false},
	{"object equal", `{"o":{"x":1,"y":"z"}}`, `{"o":{"x":1,"y":"z"}}`, true},
	// Go maps have no key order; MongoDB would compare keys in order.
	{"object key order ignored", `{"o":{"x":1,"y":2}}`, `{"o":{"y":2,"x":1}}`, true},
	{"object extra key", `{"o":{"x":1}}`, `{"o":{"x":1,"y":2}}`, false},
	{"object nested", `{"o":{"x":{"y":[1]}}}`, `{"o":{"x":{"y":[1]}}}`, true},
	{"object vs string", `{"o":{"x":1}}`, `{"o":"x"}`, false},
	{"geopoint equal", `{"loc":` + gp11 + `}`, `{"loc":` + gp11 + `}`, true},
	{"geopoint differs", `{"loc":` + gp11 + `}`, `{"loc":` + gp22 + `}`, false},
	{"bytes equal", `{"b":` + bytesA + `}`, `{"b":` + bytesA + `}`, true},
	{"bytes differ", `{"b":` + bytesA + `}`, `{"b":` + bytesB + `}`, false},
	{"bytes vs string", `{"b":` + bytesA + `}`, `{"b":"AAE="}`, false},
	{"file same name other url", `{"f":` + fileX1 + `}`, `{"f":` + fileX2 + `}`, true},
	{"file other name", `{"f":` + fileX1 + `}`, `{"f":` + fileY + `}`, false},
	{"file vs its name", `{"f":` + fileX1 + `}`, `{"f":"x.txt"}`, false},
	{"null vs missing", `{"a":null}`, `{}`, true},
	{"null vs null", `{"a":null}`, `{"a":null}`, true},
	{"null vs array with null", `{"a":null}`, `{"a":[1,null]}`, true},
	{"null vs zero", `{"a":null}`, `{"a":0}`, false},
	{"null vs empty string", `{"a":null}`, `{"a":""}`, false},
	{"null vs empty array", `{"a":null}`, `{"a":[]}`, false},
	{"$eq string", `{"a":{"$eq":"x"}}`, `{"a":"x"}`, true},
	{"$eq array contains", `{"a":{"$eq":"x"}}`, `{"a":["x"]}`, true},
	{"$eq null vs missing", `{"a":{"$eq":null}}`, `{}`, true},
	{"$eq pointer vs object", `{"p":{"$eq":` + ptrA1 + `}}`, `{"p":` + objA1 + `}`, true},
	{"$eq whole array", `{"a":{"$eq":[1,2]}}`, `{"a":[1,2]}`, true},
	{"$eq date on createdAt", `{"createdAt":{"$eq":` + d0101 + `}}`, `{"createdAt":"2024-01-01T00:00:00.000Z"}`, true},
	{"plain keys beside $exists fold into $eq", `{"o":{"x":1,"$exists":true}}`, `{"o":{"x":1}}`, true},
	{"plain keys beside $exists, other value", `{"o":{"x":1,"$exists":true}}`, `{"o":{"x":2}}`, false},
}

// neCases: $ne is the negation of equality, so missing fields match.
var neCases = []opCase{
	{"string differs", `{"a":{"$ne":"x"}}`, `{"a":"y"}`, true},
	{"string same", `{"a":{"$ne":"x"}}`, `{"a":"x"}`, false},
	{"missing", `{"a":{"$ne":"x"}}`, `{}`, true},
	{"null", `{"a":{"$ne":"x"}}`, `{"a":null}`, true},
	{"array holding it", `{"a":{"$ne":"x"}}`, `{"a":["y","x"]}`, false},
	{"array without it", `{"a":{"$ne":"x"}}`, `{"a":["y"]}`, true},
	{"number vs string", `{"a":{"$ne":1}}`, `{"a":"1"}`, true},
	{"int vs float", `{"a":{"$ne":1}}`, `{"a":1.0}`, false},
	{"bool", `{"a":{"$ne":true}}`, `{"a":false}`, true},
	{"date same instant", `{"d":{"$ne":` + date2Z + `}}`, `{"d":` + d0102 + `}`, false},
	{"pointer vs object same id", `{"p":{"$ne":` + ptrA1 + `}}`, `{"p":` + objA1 + `}`, false},
	{"pointer other class", `{"p":{"$ne":` + ptrA1 + `}}`, `{"p":` + ptrB1 + `}`, true},
	{"null vs missing", `{"a":{"$ne":null}}`, `{}`, false},
	{"null vs array with null", `{"a":{"$ne":null}}`, `{"a":[null]}`, false},
	{"null vs value", `{"a":{"$ne":null}}`, `{"a":false}`, true},
	{"geopoint", `{"loc":{"$ne":` + gp11 + `}}`, `{"loc":` + gp22 + `}`, true},
	{"file same name", `{"f":{"$ne":` + fileX1 + `}}`, `{"f":` + fileX2 + `}`, false},
	{"object", `{"o":{"$ne":{"x":1}}}`, `{"o":{"x":2}}`, true},
	{"whole array", `{"a":{"$ne":[1,2]}}`, `{"a":[1,2]}`, false},
	{"array holding the array", `{"a":{"$ne":[1,2]}}`, `{"a":[[1,2],3]}`, false},
	{"other array", `{"a":{"$ne":[1,2]}}`, `{"a":[2,1]}`, true},
}

// rangeCases: $lt/$lte/$gt/$gte compare only within the operand's type,
// against the value or any element of an array.
var rangeCases = []opCase{
	{"$gt number", `{"n":{"$gt":5}}`, `{"n":6}`, true},
	{"$gt equal", `{"n":{"$gt":5}}`, `{"n":5}`, false},
	{"$gte equal", `{"n":{"$gte":5}}`, `{"n":5.0}`, true},
	{"$lt fraction", `{"n":{"$lt":1}}`, `{"n":0.999}`, true},
	{"$lte equal", `{"n":{"$lte":1.5}}`, `{"n":1.5}`, true},
	{"$lt negative", `{"n":{"$lt":0}}`, `{"n":-3}`, true},
	{"$gt number vs string", `{"n":{"$gt":5}}`, `{"n":"6"}`, false},
	{"$lt number vs string", `{"n":{"$lt":5}}`, `{"n":"1"}`, false},
	{"$gt number vs bool", `{"n":{"$gt":0}}`, `{"n":true}`, false},
	{"$lt number vs null", `{"n":{"$lt":5}}`, `{"n":null}`, false},
	{"$lt number vs missing", `{"n":{"$lt":5}}`, `{}`, false},
	{"$gt number vs date", `{"n":{"$gt":0}}`, `{"n":` + d0101 + `}`, false},
	{"$gt array element", `{"n":{"$gt":5}}`, `{"n":[1,7]}`, true},
	{"$gt no array element", `{"n":{"$gt":5}}`, `{"n":[1,2]}`, false},
	{"$gte and $lt together", `{"n":{"$gte":5,"$lt":10}}`, `{"n":9.5}`, true},
	{"$gte and $lt, upper bound", `{"n":{"$gte":5,"$lt":10}}`, `{"n":10}`, false},
	{"$gt string", `{"s":{"$gt":"b"}}`, `{"s":"c"}`, true},
	{"$gt string prefix", `{"s":{"$gt":"b"}}`, `{"s":"ba"}`, true},
	{"$lt strings compare by bytes", `{"s":{"$lt":"a"}}`, `{"s":"Z"}`, true},
	{"$gt string vs number", `{"s":{"$gt":"a"}}`, `{"s":5}`, false},
	{"$gt bool", `{"b":{"$gt":false}}`, `{"b":true}`, true},
	{"$lt bool", `{"b":{"$lt":false}}`, `{"b":false}`, false},
	{"$gt date", `{"d":{"$gt":` + d0101 + `}}`, `{"d":` + d0102 + `}`, true},
	{"$gte date other spelling", `{"d":{"$gte":` + date2Z + `}}`, `{"d":` + d0102 + `}`, true},
	{"$lt date vs iso string on a plain field", `{"d":{"$lt":` + date03 + `}}`, `{"d":"2024-01-01T00:00:00.000Z"}`, false},
	{"$lt date vs number", `{"d":{"$lt":` + date03 + `}}`, `{"d":1}`, false},
	{"$lt createdAt date vs stored string", `{"createdAt":{"$lt":` + d0102 + `}}`, `{"createdAt":"2024-01-01T23:59:59.999Z"}`, true},
	{"$gte createdAt iso vs stored string", `{"createdAt":{"$gte":"2024-01-02T00:00:00Z"}}`, `{"createdAt":"2024-01-01T23:59:59.999Z"}`, false},
	{"$gt updatedAt iso", `{"updatedAt":{"$gt":"2024-01-01T00:00:00.000Z"}}`, `{"updatedAt":"2024-01-01T00:00:00.001Z"}`, true},
	{"$relativeTime", `{"d":{"$gt":{"$relativeTime":"2 days ago"}}}`, `{"d":{"__type":"Date","iso":"2023-12-31T00:00:00.000Z"}}`, true},
	{"$relativeTime before", `{"d":{"$gt":{"$relativeTime":"2 days ago"}}}`, `{"d":{"__type":"Date","iso":"2023-12-29T00:00:00.000Z"}}`, false},
	{"$gte null vs missing", `{"a":{"$gte":null}}`, `{}`, true},
	{"$lte null vs null", `{"a":{"$lte":null}}`, `{"a":null}`, true},
	{"$lt null", `{"a":{"$lt":null}}`, `{"a":null}`, false},
	{"$lte null vs array with null", `{"a":{"$lte":null}}`, `{"a":[1,null]}`, true},
	{"$gte null vs value", `{"a":{"$gte":null}}`, `{"a":0}`, false},
	{"$gt pointer vs pointer", `{"p":{"$gt":` + ptrA1 + `}}`, `{"p":` + ptrA2 + `}`, true},
	{"$gte bytes", `{"b":{"$gte":` + bytesA + `}}`, `{"b":` + bytesB + `}`, true},
	{"$gt bytes vs string", `{"b":{"$gt":` + bytesA + `}}`, `{"b":"zzz"}`, false},
}

func TestOperatorsEquality(t *testing.T) { runOpCases(t, eqCases) }
func TestOperatorsNe(t *testing.T)       { runOpCases(t, neCases) }
func TestOperatorsRange(t *testing.T)    { runOpCases(t, rangeCases) }

func runOpCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := matcher.Compile(parse(t, tc.where), stub{})
			if err != nil {
				t.Fatalf("compile %s: %v", tc.where, err)
			}
			if got := m.Match(decode(t, tc.object)); got != tc.want {
				t.Errorf("%s on %s: got %v, want %v", tc.where, tc.object, got, tc.want)
			}
		})
	}
}
