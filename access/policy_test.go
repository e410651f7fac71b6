package access

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/schema"
)

var (
	public   = Caller{}
	alice    = Caller{UserID: "alice"}
	bob      = Caller{UserID: "bob"}
	admin    = Caller{UserID: "carol", Roles: []string{"role:Admin"}}
	master   = Caller{Master: true}
	readOnly = Caller{Master: true, ReadOnly: true}
)

// code renders an error as its Parse code ("ok" for none).
func code(err error) string {
	if err == nil {
		return "ok"
	}
	var pe *schema.Error
	if errors.As(err, &pe) {
		return fmt.Sprint(pe.Code)
	}
	return err.Error()
}

func TestCheckCLP(t *testing.T) {
	clp := map[string]any{
		"get":             map[string]any{"*": true},
		"find":            map[string]any{"requiresAuthentication": true},
		"count":           map[string]any{"role:Admin": true},
		"create":          map[string]any{"alice": true, "pointerFields": []any{"owner"}},
		"update":          map[string]any{"pointerFields": []any{"owner"}},
		"delete":          map[string]any{},
		"addField":        map[string]any{},
		"writeUserFields": []any{"editors"},
	}
	p := Compile("Doc", clp, nil)
	for _, tc := range []struct {
		caller     Caller
		op         Op
		want       string
		restricted []string
	}{
		{public, OpGet, "ok", nil},
		{public, OpFind, "101", nil},
		{bob, OpFind, "ok", nil},
		{bob, OpCount, "119", nil},
		{admin, OpCount, "ok", nil},
		{alice, OpCreate, "ok", nil},
		{bob, OpCreate, "119", nil}, // pointer fields never grant create
		{bob, OpUpdate, "ok", []string{"owner", "editors"}},
		{public, OpUpdate, "ok", []string{"owner", "editors"}},
		{bob, OpDelete, "ok", []string{"editors"}}, // writeUserFields count for delete
		{bob, OpAddField, "ok", []string{"editors"}},
		{master, OpDelete, "ok", nil},
	} {
		s, err := p.CheckCLP(tc.caller, tc.op)
		if got := code(err); got != tc.want || !slices.Equal(s.Fields(), tc.restricted) {
			t.Errorf("%+v %s: %s %v, want %s %v", tc.caller, tc.op, got, s.Fields(), tc.want, tc.restricted)
		}
	}
	// No CLP, or an operation it does not name: open.
	for _, p := range []*Policy{Compile("Doc", nil, nil), Compile("Doc", map[string]any{"get": map[string]any{}}, nil)} {
		if _, err := p.CheckCLP(public, OpFind); err != nil {
			t.Errorf("unnamed find: %v", err)
		}
	}
	// _Installation ignores get, create and update CLPs.
	closed := map[string]any{"get": map[string]any{}, "create": map[string]any{}, "update": map[string]any{}, "delete": map[string]any{}}
	inst := Compile(ClassInstallation, closed, nil)
	for op, want := range map[Op]string{OpGet: "ok", OpCreate: "ok", OpUpdate: "ok", OpDelete: "119"} {
		if _, err := inst.CheckCLP(bob, op); code(err) != want {
			t.Errorf("_Installation %s: %s, want %s", op, code(err), want)
		}
	}
}

func TestRead(t *testing.T) {
	mine := schema.Object{"objectId": "d1", "ACL": map[string]any{"alice": map[string]any{"read": true}}}
	admins := schema.Object{"objectId": "d2", "ACL": map[string]any{"role:Admin": map[string]any{"read": true}}}
	open := schema.Object{"objectId": "d3"}
	pub := schema.Object{"objectId": "d4", "ACL": map[string]any{"*": map[string]any{"read": true}}}
	aliceUser := schema.Object{"objectId": "alice", "ACL": map[string]any{}}
	bobSession := schema.Object{"objectId": "s1", "user": schema.Pointer(ClassUser, "bob")}
	for _, tc := range []struct {
		class  string
		caller Caller
		obj    schema.Object
		want   string // "err:<code>", "yes" or "no"
	}{
		{"Doc", alice, mine, "yes"},
		{"Doc", bob, mine, "no"},
		{"Doc", admin, admins, "yes"},
		{"Doc", public, admins, "no"},
		{"Doc", public, open, "yes"},
		{"Doc", public, pub, "yes"},
		{"Doc", master, mine, "yes"},
		{"Doc", readOnly, mine, "yes"},
		{ClassUser, alice, aliceUser, "yes"},
		{ClassUser, public, aliceUser, "no"},
		{ClassUser, bob, aliceUser, "no"},
		{ClassSession, bob, bobSession, "yes"},
		{ClassSession, alice, bobSession, "no"},
		{ClassSession, public, bobSession, "err:209"},
		{ClassSession, master, bobSession, "yes"},
	} {
		got := "err:"
		r, err := Compile(tc.class, nil, nil).Read(tc.caller, OpGet)
		switch {
		case err != nil:
			got += code(err)
		case r.Visible(tc.obj):
			got = "yes"
		default:
			got = "no"
		}
		if got != tc.want {
			t.Errorf("%s %+v reads %v: %s, want %s", tc.class, tc.caller, tc.obj["objectId"], got, tc.want)
		}
	}
}

// TestReadShared checks that the readers every master and every caller
// without a session get cost no allocation, and that a caller whose
// reader depends on more than that still gets their own.
func TestReadShared(t *testing.T) {
	open := Compile("Doc", nil, nil)
	guarded := Compile("Doc", map[string]any{"get": map[string]any{"*": true},
		"protectedFields": map[string]any{"*": []any{"secret"}}}, nil)
	for _, tc := range []struct {
		name   string
		p      *Policy
		caller Caller
		shared bool
	}{
		{"master", open, master, true},
		{"read-only master", open, readOnly, true},
		{"public", open, public, true},
		{"user", open, alice, false},
		{"master, protected fields", guarded, master, true},
		{"public, protected fields", guarded, public, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allocs := testing.AllocsPerRun(10, func() {
				if _, err := tc.p.Read(tc.caller, OpGet); err != nil {
					t.Fatal(err)
				}
			})
			if shared := allocs == 0; shared != tc.shared {
				t.Errorf("Read allocates %v times, want shared=%v", allocs, tc.shared)
			}
			r, _ := tc.p.Read(tc.caller, OpGet)
			if r.Master() != tc.caller.Master {
				t.Errorf("Master() = %v, want %v", r.Master(), tc.caller.Master)
			}
			if got, want := r.Protected(nil), tc.p == guarded && !tc.caller.Master; (len(got) > 0) != want {
				t.Errorf("Protected(nil) = %v, want some: %v", got, want)
			}
		})
	}
}

func TestProtected(t *testing.T) {
	clp := map[string]any{"protectedFields": map[string]any{
		"*":               []any{"secret", "phone", "note"},
		"authenticated":   []any{"secret", "phone"},
		"role:Admin":      []any{"secret"},
		"userField:owner": []any{},
		"dave":            []any{},
	}}
	p := Compile("Doc", clp, nil)
	o1 := schema.Object{"objectId": "o1", "owner": schema.Pointer(ClassUser, "alice")}
	for _, tc := range []struct {
		caller Caller
		obj    schema.Object
		want   string
	}{
		{public, o1, "[secret phone note]"},
		{bob, o1, "[secret phone]"},
		{admin, o1, "[secret]"},
		{alice, o1, "[]"},
		{Caller{UserID: "dave"}, o1, "[]"},
		{bob, nil, "[secret phone]"},
		{master, o1, "[]"},
	} {
		r, err := p.Read(tc.caller, OpFind)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(r.Protected(tc.obj)); got != tc.want {
			t.Errorf("%+v: protected %s, want %s", tc.caller, got, tc.want)
		}
	}
	// _User: email is protected by default, a stored CLP adds to it, and
	// another user's authData is hidden; one's own record hides nothing.
	users := Compile(ClassUser, map[string]any{"protectedFields": map[string]any{"*": []any{"phone"}}}, nil)
	for _, tc := range []struct {
		caller Caller
		id     string
		want   string
	}{
		{bob, "alice", "[email phone authData]"},
		{alice, "alice", "[]"},
		{public, "alice", "[email phone authData]"},
		{master, "alice", "[]"},
	} {
		r, _ := users.Read(tc.caller, OpGet)
		if got := fmt.Sprint(r.Hidden(schema.Object{"objectId": tc.id})); got != tc.want {
			t.Errorf("_User %+v: hidden %s, want %s", tc.caller, got, tc.want)
		}
	}
}

func TestCheckWrite(t *testing.T) {
	doc := schema.Object{"objectId": "d", "owner": schema.Pointer(ClassUser, "alice"),
		"ACL": map[string]any{"alice": map[string]any{"read": true, "write": true}, "bob": map[string]any{"read": true, "write": true}}}
	ptr := Compile("Doc", map[string]any{"update": map[string]any{}, "delete": map[string]any{"*": true},
		"writeUserFields": []any{"owner"}}, nil)
	user := schema.Object{"objectId": "alice", "ACL": map[string]any{"*": map[string]any{"write": true}}}
	sess := schema.Object{"objectId": "s", "user": schema.Pointer(ClassUser, "bob")}
	for _, tc := range []struct {
		name   string
		p      *Policy
		caller Caller
		op     Op
		obj    schema.Object
		want   string
	}{
		{"owner through pointer permission", ptr, alice, OpUpdate, doc, "ok"},
		{"ACL alone is not enough", ptr, bob, OpUpdate, doc, "101"},
		{"delete is open, ACL applies", ptr, bob, OpDelete, doc, "ok"},
		{"ACL refuses", ptr, public, OpDelete, doc, "101"},
		{"read-only master", ptr, readOnly, OpUpdate, doc, "119"},
		{"master", ptr, master, OpUpdate, doc, "ok"},
		{"user changes themselves", Compile(ClassUser, nil, nil), alice, OpUpdate, user, "ok"},
		{"another user, whatever the ACL", Compile(ClassUser, nil, nil), bob, OpUpdate, user, "206"},
		{"public deletes a user", Compile(ClassUser, nil, nil), public, OpDelete, user, "206"},
		{"own session", Compile(ClassSession, nil, nil), bob, OpDelete, sess, "ok"},
		{"another's session", Compile(ClassSession, nil, nil), alice, OpDelete, sess, "101"},
		{"no session", Compile(ClassSession, nil, nil), public, OpUpdate, sess, "209"},
	} {
		if got := code(tc.p.CheckWrite(tc.caller, tc.op, tc.obj)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	addField := Compile("Doc", map[string]any{"addField": map[string]any{}, "writeUserFields": []any{"owner"}}, nil)
	for _, tc := range []struct {
		caller Caller
		obj    schema.Object
		want   string
	}{{alice, doc, "ok"}, {bob, doc, "119"}, {alice, nil, "119"}, {master, nil, "ok"}, {readOnly, doc, "119"}} {
		if got := code(addField.CheckAddField(tc.caller, tc.obj)); got != tc.want {
			t.Errorf("addField %+v: %s, want %s", tc.caller, got, tc.want)
		}
	}
}
