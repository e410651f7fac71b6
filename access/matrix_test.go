package access_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/access"
	"github.com/quarrydata/quarry/access/accesstest"
	"github.com/quarrydata/quarry/schema"
)

// TestPermissionMatrix runs the permission matrix (the table transport's
// HTTP test runs too) against the pure rules: no store, no HTTP. Objects
// are named by their "name"; an error outcome is compared by its code.
func TestPermissionMatrix(t *testing.T) {
	u := accesstest.Users{Alice: "alice", Bob: "bob", Carol: "carol", Dave: "dave"}
	parent, child := "role:"+accesstest.ParentRole, "role:"+accesstest.ChildRole
	callers := [7]access.Caller{
		{},
		{UserID: u.Alice},
		{UserID: u.Bob},
		{UserID: u.Carol, Roles: []string{parent}},
		{UserID: u.Dave, Roles: []string{child, parent}},
		{Master: true},
		{Master: true, ReadOnly: true},
	}
	for _, setup := range accesstest.Matrix(u) {
		m := newMatrixClass(setup)
		for _, r := range setup.Rows {
			for i, c := range callers {
				t.Run(setup.Name+"/"+r.Name+"/"+accesstest.Columns[i], func(t *testing.T) {
					got, want := m.do(r, c), r.Want[i]
					if _, code, isErr := strings.Cut(want, "/"); isErr && !strings.Contains(want, ":") {
						want = "err:" + code
					}
					if got != want {
						t.Errorf("%s %s as %s: got %s, want %s", setup.Name, r.Name, accesstest.Columns[i], got, want)
					}
				})
			}
		}
	}
}

// matrixClass is one setup's class: its policy and its objects by name.
type matrixClass struct {
	setup   accesstest.Setup
	policy  *access.Policy
	objects map[string]schema.Object
}

func newMatrixClass(s accesstest.Setup) *matrixClass {
	m := &matrixClass{setup: s, policy: access.Compile(s.Class, s.CLP, nil), objects: map[string]schema.Object{}}
	for _, body := range s.Objects {
		obj := maps.Clone(body)
		obj["objectId"] = body["name"]
		m.objects[body["name"].(string)] = obj
	}
	return m
}

func errOutcome(err error) string {
	var pe *schema.Error
	if errors.As(err, &pe) {
		return fmt.Sprint("err:", pe.Code)
	}
	return "err:" + err.Error()
}

func (m *matrixClass) do(r accesstest.Row, c access.Caller) string {
	switch r.Op {
	case accesstest.OpGet:
		return m.get(r, c)
	case accesstest.OpFind, accesstest.OpCount:
		return m.find(r, c)
	case accesstest.OpCreate:
		if err := m.policy.CheckCreate(c); err != nil {
			return errOutcome(err)
		}
		return "201"
	case accesstest.OpUpdate, accesstest.OpDelete, accesstest.OpAddField:
		if err := m.write(r, c, r.Op); err != nil {
			return errOutcome(err)
		}
		return "200"
	case accesstest.OpInclude:
		return m.include(r, c)
	case accesstest.OpBatch:
		return m.batch(r, c)
	}
	return "unknown op " + r.Op
}

func (m *matrixClass) get(r accesstest.Row, c access.Caller) string {
	name := r.On
	if name == "" {
		name = m.setup.GetID
	}
	rd, err := m.policy.Read(c, access.OpGet)
	if err != nil {
		return errOutcome(err)
	}
	obj := m.objects[name]
	if !rd.Visible(obj) {
		return errOutcome(schema.ErrObjectNotFound)
	}
	if r.Fields {
		return "fields:" + m.shown(rd, obj)
	}
	return "200"
}

// shown lists which of the setup's protected fields the reader sees of obj.
func (m *matrixClass) shown(rd *access.Reader, obj schema.Object) string {
	hidden := rd.Hidden(obj)
	var out []string
	for _, f := range m.setup.Protected {
		if _, ok := obj[f]; ok && !slices.Contains(hidden, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (m *matrixClass) find(r accesstest.Row, c access.Caller) string {
	op := access.OpFind
	if r.Op == accesstest.OpCount {
		op = access.OpCount
	}
	rd, err := m.policy.Read(c, op)
	if err != nil {
		return errOutcome(err)
	}
	where := r.Where
	if where == nil {
		where = map[string]any{"fixture": true}
	}
	var order []string
	if r.Order != "" {
		order = []string{r.Order}
	}
	if err := rd.CheckQuery(where, order); err != nil {
		return errOutcome(err)
	}
	var names, parts []string
	for _, name := range slices.Sorted(maps.Keys(m.objects)) {
		obj := m.objects[name]
		if rd.Visible(obj) && matchesEqualities(obj, where) {
			names = append(names, name)
			parts = append(parts, name+"="+m.shown(rd, obj))
		}
	}
	switch {
	case r.Op == accesstest.OpCount:
		return fmt.Sprint("count:", len(names))
	case r.Fields:
		return "fields:" + strings.Join(parts, ";")
	}
	return "ids:" + strings.Join(names, ",")
}

func matchesEqualities(obj schema.Object, where map[string]any) bool {
	for k, v := range where {
		if !schema.Equal(obj[k], v) {
			return false
		}
	}
	return true
}

// write checks an update, delete or addField of a fresh object.
func (m *matrixClass) write(r accesstest.Row, c access.Caller, op string) error {
	fresh := r.Fresh
	if fresh == nil {
		fresh = m.setup.Fresh
	}
	obj := maps.Clone(fresh)
	obj["objectId"] = "fresh"
	writeOp := access.OpUpdate
	if op == accesstest.OpDelete {
		writeOp = access.OpDelete
	}
	if err := m.policy.CheckWrite(c, writeOp, obj); err != nil {
		return err
	}
	if op == accesstest.OpAddField {
		return m.policy.CheckAddField(c, obj)
	}
	return nil
}

// include expands the holders' targets that a get of each would show.
func (m *matrixClass) include(r accesstest.Row, c access.Caller) string {
	rd, err := m.policy.Read(c, access.OpGet)
	var names []string
	for _, name := range m.setup.Held {
		if obj := m.objects[name]; err == nil && rd.Visible(obj) {
			if r.Fields {
				return "fields:" + m.shown(rd, obj)
			}
			names = append(names, name)
		}
	}
	if r.Fields {
		return "not expanded"
	}
	sort.Strings(names)
	return "ids:" + strings.Join(names, ",")
}

// batch is [GET GetID, PUT fresh, DELETE fresh]; with Fields, [GET GetID].
func (m *matrixClass) batch(r accesstest.Row, c access.Caller) string {
	get := m.get(accesstest.Row{Fields: r.Fields}, c)
	if r.Fields && strings.HasPrefix(get, "fields:") {
		return get
	}
	codes := []string{itemCode(get)}
	if !r.Fields {
		for _, op := range []string{accesstest.OpUpdate, accesstest.OpDelete} {
			code := "0"
			if err := m.write(accesstest.Row{}, c, op); err != nil {
				code = itemCode(errOutcome(err))
			}
			codes = append(codes, code)
		}
	}
	return "items:" + strings.Join(codes, ",")
}

func itemCode(outcome string) string {
	if code, ok := strings.CutPrefix(outcome, "err:"); ok {
		return code
	}
	return "0"
}
