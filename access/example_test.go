package access_test

import (
	"fmt"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/schema"
)

// A class readable only through a pointer permission, with a protected
// field: compile its policy once, then decide per caller and object.
func ExamplePolicy_Read() {
	policy := access.Compile("Doc", map[string]any{
		"find":            map[string]any{},
		"readUserFields":  []any{"owner"},
		"protectedFields": map[string]any{"*": []any{"secret"}, "userField:owner": []any{}},
	}, nil)
	doc := schema.Object{"objectId": "d1", "owner": schema.Pointer("_User", "alice"), "secret": "s"}
	for _, c := range []access.Caller{{UserID: "alice"}, {UserID: "bob"}, {}} {
		r, err := policy.Read(c, access.OpFind)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%q sees d1: %v, hidden: %v\n", c.UserID, r.Visible(doc), r.Hidden(doc))
	}
	// Output:
	// "alice" sees d1: true, hidden: []
	// "bob" sees d1: false, hidden: [secret]
	// "" sees d1: false, hidden: [secret]
}
