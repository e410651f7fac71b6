package graphql

import (
	"testing"

	"github.com/quarrydata/quarry/schema"
)

// TestBuildModelSurvivesOddClasses: class and field names that would
// collide with the fixed schema or with each other leave that class out;
// the schema still loads and keeps the rest.
func TestBuildModelSurvivesOddClasses(t *testing.T) {
	class := func(name string, fields ...string) *schema.Class {
		c := schema.NewClass(name)
		for _, f := range fields {
			c.Fields[f] = schema.Field{Type: schema.TypeString}
		}
		return c
	}
	score := class("GameScore", "OR", "AND", "player")
	score.Fields["owner"] = schema.Field{Type: schema.TypePointer, TargetClass: "_User"}
	score.Fields["fans"] = schema.Field{Type: schema.TypeRelation, TargetClass: "_User"}
	score.Fields["gone"] = schema.Field{Type: schema.TypePointer, TargetClass: "Missing"}
	classes := []*schema.Class{score, class("gameScore"), class("Number"), class("Health"), class("Person"), class("Persons"),
		class("GameScoreEdge"), class("Polygon"), class("SchemaField"), class("UserACL"), class("User")}
	m, err := buildModel(classes, modelConfig{anyFunction: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GameScore", "_User", "_Role", "Person"} {
		if m.classes[want] == nil {
			t.Errorf("%s left out", want)
		}
	}
	for _, gone := range []string{"gameScore", "Number", "Health", "Persons", "GameScoreEdge", "Polygon", "SchemaField", "UserACL", "User"} {
		if m.classes[gone] != nil {
			t.Errorf("%s kept", gone)
		}
	}
	if _, ok := m.classes["GameScore"].byName["gone"]; ok {
		t.Error("a pointer to a missing class is shown")
	}
}
