package live

import (
	"testing"

	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// TestRemotePolicyCompiledOncePerCLP: the standalone LiveQuery server
// decides visibility from the CLP published with each change, compiling
// it once for every subscriber of the change and again only when it
// differs.
func TestRemotePolicyCompiledOncePerCLP(t *testing.T) {
	a := RemoteAuthority(RemoteOptions{ServerURL: "http://127.0.0.1:1/parse"}).(*remoteAuthority)
	clp := map[string]any{"find": map[string]any{}, "get": map[string]any{},
		"readUserFields": []any{"owner"}}
	alice, bob := Identity{UserID: "alice"}, Identity{UserID: "bob"}
	obj := schema.Object{"objectId": "d", "owner": schema.Pointer("_User", "alice")}
	cases := []struct {
		id   Identity
		op   string
		clp  map[string]any
		want string
	}{
		{alice, service.ReadFind, clp, "visible"},
		{bob, service.ReadFind, clp, "hidden"},
		{Identity{}, service.ReadGet, clp, "hidden"},
		{alice, service.ReadFind, map[string]any{"find": map[string]any{}}, "refused"},
		{alice, service.ReadFind, nil, "visible"},
	}
	for _, tc := range cases {
		got := "refused"
		if rf, err := a.ReadFilter(tc.id, "Doc", tc.op, tc.clp); err == nil {
			got = "hidden"
			if rf.Visible == nil || rf.Visible(obj) {
				got = "visible"
			}
		}
		if got != tc.want {
			t.Errorf("%s %s with %v: %s, want %s", tc.id.UserID, tc.op, tc.clp, got, tc.want)
		}
	}
	p := a.policy("Doc", clp)
	if a.policy("Doc", clp) != p {
		t.Error("the same CLP was compiled twice")
	}
	equal := map[string]any{"find": map[string]any{}, "get": map[string]any{}, "readUserFields": []any{"owner"}}
	if a.policy("Doc", equal) != p {
		t.Error("an equal CLP from a later change was compiled again")
	}
	if a.policy("Doc", map[string]any{}) == p {
		t.Error("a different CLP kept the old policy")
	}
}
