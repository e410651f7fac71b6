package scaleout

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The sequential models the histories are checked against. Each is what
// one Quarry instance alone does; a history of three instances must have
// a serial order these models allow. Every model partitions by object (or
// username): operations on different objects are independent, so the
// checker takes each object's operations alone.
//
// An operation that got no answer may have taken effect or not (its
// outcome is unknown): the models allow both. An answer other than the
// one the model allows (a 101 for an object that exists, a 500) has no
// serial order and fails the check.

// outcome is how an operation ended.
type outcome int

const (
	answered outcome = iota // 2xx with the expected body
	refused                 // an HTTP answer the operation must not get
	unknown                 // no answer: the write may or may not have happened
)

// partitionBy splits a history by the key each input carries.
func partitionBy(key func(in any) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range history {
			k := key(op.Input)
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, byKey[k])
		}
		return out
	}
}

// Counter: Increment by 1 answers the new value; GET answers the value.

type counterIn struct {
	key string
	inc bool // Increment; else GET
}

type counterOut struct {
	outcome outcome
	value   int64
	detail  string // the answer, for a refused operation
}

var counterModel = (&porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(counterIn).key }),
	Init:      func() []any { return []any{int64(0)} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(int64), input.(counterIn), output.(counterOut)
		switch {
		case out.outcome == refused:
			return nil
		case in.inc && out.outcome == unknown:
			return []any{s, s + 1}
		case in.inc && out.value == s+1:
			return []any{s + 1}
		case !in.inc && out.value == s:
			return []any{s}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(counterIn), output.(counterOut)
		name := "get"
		if in.inc {
			name = "inc"
		}
		return fmt.Sprintf("%s(%s) -> %s", name, in.key, describe(out.outcome, fmt.Sprint(out.value), out.detail))
	},
}).ToModel()

func describe(o outcome, value, detail string) string {
	switch o {
	case refused:
		return "refused " + detail
	case unknown:
		return "no answer"
	}
	return value
}

// Register per field: one object's fields, each set by its own writers
// (disjoint fields); GET answers every field.

const registerFields = 3

type registerIn struct {
	key   string
	field int // -1: GET
	value string
}

type registerOut struct {
	outcome outcome
	fields  [registerFields]string // GET's answer ("" for a missing field)
	detail  string
}

var registerModel = (&porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(registerIn).key }),
	Init:      func() []any { return []any{[registerFields]string{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.([registerFields]string), input.(registerIn), output.(registerOut)
		if out.outcome == refused {
			return nil
		}
		if in.field < 0 {
			if out.fields == s {
				return []any{s}
			}
			return nil
		}
		next := s
		next[in.field] = in.value
		if out.outcome == unknown {
			return []any{s, next}
		}
		return []any{next}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(registerIn), output.(registerOut)
		if in.field < 0 {
			return fmt.Sprintf("get(%s) -> %s", in.key, describe(out.outcome, fmt.Sprint(out.fields), out.detail))
		}
		return fmt.Sprintf("set(%s.f%d=%s) -> %s", in.key, in.field, in.value, describe(out.outcome, "ok", out.detail))
	},
}).ToModel()

// Set: AddUnique of one value answers the whole array after it; GET
// answers the array. Arrays are compared as sets, kept sorted and joined.

type setIn struct {
	key   string
	value string // "": GET
}

type setOut struct {
	outcome outcome
	members string // sorted, comma-joined
	detail  string
}

// setOf is members as a set's canonical string.
func setOf(members []string) string {
	m := slices.Clone(members)
	slices.Sort(m)
	return strings.Join(slices.Compact(m), ",")
}

func setWith(s, v string) string {
	if s == "" {
		return v
	}
	return setOf(append(strings.Split(s, ","), v))
}

var setModel = (&porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(setIn).key }),
	Init:      func() []any { return []any{""} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(string), input.(setIn), output.(setOut)
		switch {
		case out.outcome == refused:
			return nil
		case in.value == "" && out.members == s:
			return []any{s}
		case in.value == "":
			return nil
		case out.outcome == unknown:
			return []any{s, setWith(s, in.value)}
		case out.members == setWith(s, in.value):
			return []any{out.members}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(setIn), output.(setOut)
		if in.value == "" {
			return fmt.Sprintf("get(%s) -> {%s}", in.key, describe(out.outcome, out.members, out.detail))
		}
		return fmt.Sprintf("addUnique(%s, %s) -> {%s}", in.key, in.value, describe(out.outcome, out.members, out.detail))
	},
}).ToModel()

// Sign-up: the first sign-up of a username answers 201, every later one
// 202 (username taken).

type signUpIn struct{ username string }

type signUpOut struct {
	status, code int // status 0: no answer
}

var signUpModel = (&porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(signUpIn).username }),
	Init:      func() []any { return []any{false} },
	Step: func(state, input, output any) []any {
		taken, out := state.(bool), output.(signUpOut)
		switch {
		case out.status == 0:
			return []any{taken, true}
		case !taken && out.status == 201:
			return []any{true}
		case taken && out.status == 400 && out.code == 202:
			return []any{true}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(signUpIn), output.(signUpOut)
		return fmt.Sprintf("signUp(%s) -> HTTP %d code %d", in.username, out.status, out.code)
	},
}).ToModel()

// By id: one object's life, create then reads, an update and a delete,
// each possibly on another instance. A read by id answers the latest
// answered write, or 101 once it is deleted; an update of an object that
// exists answers 200.

type objectState struct {
	exists bool
	value  string
}

type byIDIn struct {
	key   string
	op    string // create, get, update, delete
	value string // create and update
}

type byIDOut struct {
	outcome outcome
	found   bool   // 2xx (not 101)
	value   string // GET's value
	detail  string
}

var byIDModel = (&porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(byIDIn).key }),
	Init:      func() []any { return []any{objectState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(objectState), input.(byIDIn), output.(byIDOut)
		if out.outcome == refused {
			return nil
		}
		var next objectState
		switch in.op {
		case "get":
			if out.found == s.exists && (!s.exists || out.value == s.value) {
				return []any{s}
			}
			return nil
		case "create":
			next = objectState{true, in.value}
		case "update":
			if out.outcome == answered && out.found != s.exists {
				return nil
			}
			if !s.exists {
				return []any{s}
			}
			next = objectState{true, in.value}
		case "delete":
			if out.outcome == answered && out.found != s.exists {
				return nil
			}
			next = objectState{}
		}
		if out.outcome == unknown {
			return []any{s, next}
		}
		return []any{next}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(byIDIn), output.(byIDOut)
		res := "101"
		switch {
		case out.found && in.op == "get":
			res = "found " + out.value
		case out.found:
			res = "ok"
		}
		return fmt.Sprintf("%s(%s %s) -> %s", in.op, in.key, in.value, describe(out.outcome, res, out.detail))
	},
}).ToModel()

// authData: one provider id links at most one user. A sign-up with it
// creates that user (201) or, once it is linked, logs in as it (200, the
// same objectId) or answers 208 (a sign-up that lost a race); a link of it to a user answers 200 when it is free or
// already that user's, and 208 when another user holds it.

type authIn struct {
	id   string // the anonymous provider id
	link string // the user it is linked to; "": a sign-up
}

type authOut struct {
	status, code int
	user         string // sign-up: the objectId answered
}

var authModel = (&porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(authIn).id }),
	Init:      func() []any { return []any{""} },
	Step: func(state, input, output any) []any {
		holder, in, out := state.(string), input.(authIn), output.(authOut)
		if in.link == "" {
			switch {
			case holder == "" && out.status == 201 && out.user != "":
				return []any{out.user}
			case holder != "" && out.status == 200 && out.user == holder:
				return []any{holder}
			case holder != "" && out.status == 400 && out.code == 208:
				// Lost a race with another instance's sign-up, which
				// answers 208 rather than a login (docs/scaling.md).
				return []any{holder}
			}
			return nil
		}
		switch {
		case (holder == "" || holder == in.link) && out.status == 200:
			return []any{in.link}
		case holder != "" && holder != in.link && out.status == 400 && out.code == 208:
			return []any{holder}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(authIn), output.(authOut)
		if in.link == "" {
			return fmt.Sprintf("signUp(authData %s) -> HTTP %d code %d user %s", in.id, out.status, out.code, out.user)
		}
		return fmt.Sprintf("link(authData %s to %s) -> HTTP %d code %d", in.id, in.link, out.status, out.code)
	},
}).ToModel()
