package fuzz

import (
	"fmt"
	"math/rand"
	"strings"
)

// Changer is a Writer that can also delete: Populate's later phase
// changes and deletes objects so that index maintenance is exercised.
type Changer interface {
	Writer
	Delete(class, id string) error
}

// Mutate changes some items with update operators and deletes a few,
// applying the same changes to the reference's copy.
func Mutate(r *rand.Rand, w Changer, world *World) error {
	items := world.Objects[ItemClass]
	kept := items[:0:0]
	for _, o := range items {
		id := o["objectId"].(string)
		switch r.Intn(10) {
		case 0:
			if err := w.Delete(ItemClass, id); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			continue
		case 1, 2, 3:
			body := map[string]any{}
			for i := 1 + r.Intn(3); i > 0; i-- {
				key, op := randomUpdate(r, world, o)
				if clashes(body, key) {
					continue
				}
				body[key] = op
			}
			updatedAt, err := w.Update(ItemClass, id, body)
			if err != nil {
				return fmt.Errorf("update %s with %v: %w", id, body, err)
			}
			for key, op := range body {
				applyUpdate(o, key, op)
			}
			o["updatedAt"] = updatedAt
		}
		kept = append(kept, o)
	}
	world.Objects[ItemClass] = kept
	return nil
}

// clashes reports whether body already changes key's top-level field
// under another path ("o" and "o.x"): the two would apply in map order,
// which the reference cannot follow.
func clashes(body map[string]any, key string) bool {
	root, _, _ := strings.Cut(key, ".")
	for k := range body {
		if r, _, _ := strings.Cut(k, "."); r == root && k != key {
			return true
		}
	}
	return false
}

// randomUpdate draws one key's change: a new value, or an operator.
func randomUpdate(r *rand.Rand, world *World, o map[string]any) (string, any) {
	switch r.Intn(11) {
	case 9:
		return "n", nil
	case 10:
		if _, ok := o["o"].(map[string]any); ok {
			// A dot path sets one key inside an Object field.
			return "o.x", pick(r, poolNumbers)
		}
		return "s", pick(r, poolStrings)
	case 0:
		return "n", pick(r, poolNumbers)
	case 1:
		if _, isNull := o["n"]; isNull && o["n"] == nil {
			return "n", 5.0 // Increment of null is left to each server
		}
		return "n", map[string]any{"__op": "Increment", "amount": []any{1.0, -2.0, 0.5}[r.Intn(3)]}
	case 2:
		return []string{"s", "n", "d", "p", "loc", "o"}[r.Intn(6)], map[string]any{"__op": "Delete"}
	case 3:
		return "s", pick(r, poolStrings)
	case 4:
		return "arr", map[string]any{"__op": []string{"Add", "AddUnique", "Remove"}[r.Intn(3)],
			"objects": []any{pick(r, poolNumbers), pick(r, poolStrings)}}
	case 5:
		return "d", randomDate(r)
	case 6:
		return "loc", geoPoint(randomPoint(r, 1.5))
	case 7:
		return "p", ownerPointer(r, world)
	}
	return "txt", randomText(r)
}

// applyUpdate applies one key's change as the specification describes
// the operators: Increment adds (from 0 when missing), Add appends,
// AddUnique appends what is not there yet, Remove drops every equal
// element, Delete removes the key.
func applyUpdate(o map[string]any, key string, change any) {
	if parent, child, dotted := strings.Cut(key, "."); dotted {
		inner := map[string]any{}
		for k, v := range o[parent].(map[string]any) {
			inner[k] = v
		}
		inner[child] = change
		o[parent] = inner
		return
	}
	op, _ := change.(map[string]any)
	if op == nil || op["__op"] == nil {
		o[key] = change
		return
	}
	switch op["__op"] {
	case "Delete":
		delete(o, key)
	case "Increment":
		n, _ := o[key].(float64)
		o[key] = n + op["amount"].(float64)
	case "Add", "AddUnique", "Remove":
		arr, _ := o[key].([]any)
		out := append([]any{}, arr...)
		for _, x := range op["objects"].([]any) {
			switch op["__op"] {
			case "Add":
				out = append(out, x)
			case "AddUnique":
				if !inMatch(x, true, out) {
					out = append(out, x)
				}
			case "Remove":
				kept := out[:0]
				for _, y := range out {
					if !equal(x, y) {
						kept = append(kept, y)
					}
				}
				out = kept
			}
		}
		o[key] = out
	}
}
