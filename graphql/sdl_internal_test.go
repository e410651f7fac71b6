package graphql

import (
	"testing"

	"github.com/quarrydata/quarry/schema"
)

func TestBuildModelValidates(t *testing.T) {
	c := schema.NewClass("GameScore")
	c.Fields["score"] = schema.Field{Type: schema.TypeNumber}
	c.Fields["owner"] = schema.Field{Type: schema.TypePointer, TargetClass: "_User"}
	c.Fields["fans"] = schema.Field{Type: schema.TypeRelation, TargetClass: "_User"}
	_, err := buildModel([]*schema.Class{c}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
}
