package graphql

import (
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/quarrydata/quarry/accounts"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
)

// mutate resolves a root mutation field.
func (e *executor) mutate(f *ast.Field, args map[string]any) (any, error) {
	input, _ := numbers(args["input"]).(map[string]any)
	var out map[string]any
	var err error
	switch f.Name {
	case "signUp":
		out, err = e.signUp(input)
	case "logIn":
		out, err = e.logIn(input)
	case "logInWith":
		out, err = e.logInWith(input)
	case "createFile":
		out, err = e.createFile(input)
	case "logOut":
		if err = e.h.acc.LogOut(e.auth); err == nil {
			out = map[string]any{"ok": true}
		}
	case "resetPassword":
		// The same request as REST's POST /requestPasswordReset, with the
		// same answer whether or not an account has the address.
		if err = e.h.acc.RequestPasswordReset(input["email"]); err == nil {
			out = map[string]any{"ok": true}
		}
	case "confirmResetPassword":
		out, err = e.confirmResetPassword(input)
	case "sendVerificationEmail":
		if err = e.h.acc.RequestVerificationEmail(input["email"]); err == nil {
			out = map[string]any{"ok": true}
		}
	case "challenge":
		body := map[string]any{}
		for _, k := range []string{"username", "password", "authData", "challengeData"} {
			if v, ok := input[k]; ok && v != nil {
				body[k] = v
			}
		}
		var reply map[string]any
		if reply, err = e.h.acc.Challenge(e.auth, body); err == nil {
			out = map[string]any{"challengeData": reply["challengeData"]}
		}
	case "callCloudCode":
		out, err = e.callCloudCode(input)
	case "updateCloudConfig":
		out, err = e.updateCloudConfig(input)
	case "createClass", "updateClass", "deleteClass":
		out, err = e.classMutation(f.Name, input)
	default:
		rf, ok := e.m.mutation[f.Name]
		if !ok {
			return nil, nil
		}
		var obj any
		switch rf.kind {
		case rootCreate:
			obj, err = e.create(rf.class, input)
		case rootUpdate:
			obj, err = e.update(rf.class, input)
		case rootDelete:
			obj, err = e.delete(rf.class, input)
		}
		out = map[string]any{rf.class.single: obj}
	}
	if err != nil {
		return nil, err
	}
	out["clientMutationId"] = input["clientMutationId"]
	return out, nil
}

// fieldsIn turns a Create/Update<Class>FieldsInput into a REST body.
// Nested creates (createAndLink, createAndAdd) run first; a null unsets
// the field on update. removes are relation removals that must run as a
// second write, since one field takes one operator.
func (e *executor) fieldsIn(cm *classModel, v any, update bool) (body, removes map[string]any, err error) {
	in, _ := v.(map[string]any)
	body = map[string]any{}
	for k, x := range in {
		if k == "ACL" {
			if x == nil {
				if update {
					body[k] = map[string]any{"__op": "Delete"}
				}
				continue
			}
			body[k] = aclIn(x)
			continue
		}
		fm, ok := cm.byName[k]
		if !ok {
			continue
		}
		if x == nil {
			if update {
				body[k] = map[string]any{"__op": "Delete"}
			}
			continue
		}
		switch fm.Type {
		case schema.TypePointer:
			p, err := e.pointerIn(fm.target, x)
			if err != nil {
				return nil, nil, err
			}
			if p != nil {
				body[k] = p
			}
		case schema.TypeRelation:
			add, remove, err := e.relationIn(fm.target, x)
			if err != nil {
				return nil, nil, err
			}
			if len(add) > 0 {
				body[k] = map[string]any{"__op": "AddRelation", "objects": add}
			}
			if len(remove) > 0 {
				if body[k] == nil {
					body[k] = map[string]any{"__op": "RemoveRelation", "objects": remove}
				} else {
					if removes == nil {
						removes = map[string]any{}
					}
					removes[k] = map[string]any{"__op": "RemoveRelation", "objects": remove}
				}
			}
		case schema.TypeFile:
			f, err := e.fileFieldIn(x)
			if err != nil {
				return nil, nil, err
			}
			body[k] = f
		default:
			body[k] = scalarIn(fm.Type, x)
		}
	}
	return body, removes, nil
}

func (e *executor) pointerIn(target *classModel, v any) (any, error) {
	in, _ := v.(map[string]any)
	if link, ok := in["link"].(string); ok {
		return schema.Pointer(target.class, idOf(target.class, link)), nil
	}
	if fields, ok := in["createAndLink"]; ok && fields != nil {
		id, err := e.createID(target, fields)
		if err != nil {
			return nil, err
		}
		return schema.Pointer(target.class, id), nil
	}
	return nil, nil
}

func (e *executor) relationIn(target *classModel, v any) (add, remove []any, err error) {
	in, _ := v.(map[string]any)
	for _, id := range asList(in["add"]) {
		add = append(add, schema.Pointer(target.class, idOf(target.class, str(id))))
	}
	for _, fields := range asList(in["createAndAdd"]) {
		id, err := e.createID(target, fields)
		if err != nil {
			return nil, nil, err
		}
		add = append(add, schema.Pointer(target.class, id))
	}
	for _, id := range asList(in["remove"]) {
		remove = append(remove, schema.Pointer(target.class, idOf(target.class, str(id))))
	}
	return add, remove, nil
}

// createID creates an object from a fields input and returns its id.
func (e *executor) createID(cm *classModel, fields any) (string, error) {
	body, _, err := e.fieldsIn(cm, fields, false)
	if err != nil {
		return "", err
	}
	res, err := e.h.svc.Create(e.auth, cm.class, body)
	if err != nil {
		return "", err
	}
	return res.ObjectID, nil
}

// reread returns the object after a write as the caller may read it; when
// they may not, what the write itself tells (the body and its reply).
func (e *executor) reread(cm *classModel, id string, known map[string]any) (any, error) {
	obj, err := e.h.svc.Get(e.auth, cm.class, id, service.ReadOptions{})
	if err == nil {
		return &objectValue{cm, obj}, nil
	}
	if pe, ok := schema.AsError(err); !ok || pe.Code != schema.CodeObjectNotFound {
		return nil, err
	}
	known["objectId"] = id
	return &objectValue{cm, known}, nil
}

func (e *executor) create(cm *classModel, input map[string]any) (any, error) {
	body, _, err := e.fieldsIn(cm, input["fields"], false)
	if err != nil {
		return nil, err
	}
	res, err := e.h.svc.Create(e.auth, cm.class, body)
	if err != nil {
		return nil, err
	}
	body["createdAt"], body["updatedAt"] = res.CreatedAt, res.CreatedAt
	return e.reread(cm, res.ObjectID, body)
}

func (e *executor) update(cm *classModel, input map[string]any) (any, error) {
	id := idOf(cm.class, str(input["id"]))
	body, removes, err := e.fieldsIn(cm, input["fields"], true)
	if err != nil {
		return nil, err
	}
	reply, err := e.h.svc.Update(e.auth, cm.class, id, body)
	if err != nil {
		return nil, err
	}
	if removes != nil {
		if reply, err = e.h.svc.Update(e.auth, cm.class, id, removes); err != nil {
			return nil, err
		}
	}
	body["updatedAt"] = reply.UpdatedAt
	return e.reread(cm, id, body)
}

func (e *executor) delete(cm *classModel, input map[string]any) (any, error) {
	id := idOf(cm.class, str(input["id"]))
	obj, err := e.h.svc.Get(e.auth, cm.class, id, service.ReadOptions{})
	if err != nil {
		return nil, err
	}
	if err := e.h.svc.Delete(e.auth, cm.class, id); err != nil {
		return nil, err
	}
	return &objectValue{cm, obj}, nil
}

func (e *executor) callCloudCode(input map[string]any) (map[string]any, error) {
	params, _ := input["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	res, err := e.h.svc.RunFunction(e.auth, str(input["functionName"]), params)
	if err != nil {
		return nil, err
	}
	if res == service.NoResult {
		res = nil
	}
	return map[string]any{"result": res}, nil
}

// confirmResetPassword sets a new password with a reset link's token, as
// the reset page's form does; the username must be the token's user.
func (e *executor) confirmResetPassword(input map[string]any) (map[string]any, error) {
	token, _ := input["token"].(string)
	username, err := e.h.acc.ResetTokenUser(token)
	if err != nil {
		return nil, err
	}
	if given, _ := input["username"].(string); given != username {
		return nil, accounts.ErrInvalidLink
	}
	password, _ := input["password"].(string)
	if _, err := e.h.acc.ResetPassword(token, password); err != nil {
		return nil, err
	}
	return map[string]any{"ok": true}, nil
}
