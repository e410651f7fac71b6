package graphql

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/quarrydata/quarry/schema"
)

// model is the generated schema for one set of class schemas: the SDL,
// gqlparser's validated schema, and the tables the executor dispatches on.
type model struct {
	sdl     string
	schema  *ast.Schema
	classes map[string]*classModel // by Parse class name
	byType  map[string]*classModel // by GraphQL type name
	// query and mutation map generated root fields to their class.
	query    map[string]rootField
	mutation map[string]rootField
	// subscription maps generated subscription fields to their class and
	// the LiveQuery event they listen to.
	subscription map[string]subscriptionField
	// dropped are the types graphQLCustomTypeDefs extends that the
	// schema does not hold (their extensions are left out).
	dropped []string

	// docs caches the documents validated against this schema by their
	// text (MaxCachedDocuments at most): apps send the same few queries.
	docsMu sync.Mutex
	docs   map[string]*ast.QueryDocument
}

// MaxCachedDocuments bounds the validated documents kept per schema; the
// cache starts over when full.
const MaxCachedDocuments = 512

// document parses and validates a query, or returns it from the cache. A
// failure comes with the Apollo code that names its kind (codeParseFailed,
// codeValidationFailed), which the HTTP front end answers with. maxFields
// (when positive) bounds the document before it is validated: its tokens
// (tokensPerField each) while it is parsed, then its fields and fragment
// spreads, fragments expanded.
func (m *model) document(query string, maxFields int) (*ast.QueryDocument, gqlerror.List, string) {
	m.docsMu.Lock()
	doc, ok := m.docs[query]
	m.docsMu.Unlock()
	if ok {
		return doc, nil, ""
	}
	maxTokens := 0 // the parser's "no limit"
	if maxFields > 0 {
		maxTokens = maxFields * tokensPerField
	}
	// The parser stops at the token limit: a huge document costs no more
	// than its first maxTokens tokens.
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if err != nil {
		ge := asGQLError(err)
		if strings.HasPrefix(ge.Message, "exceeded token limit") {
			ge = gqlerror.Errorf("The query holds more than %d tokens (%d per field of graphQLMaxFields).", maxTokens, tokensPerField)
		}
		return nil, gqlerror.List{ge}, codeParseFailed
	}
	// Validation compares fields pairwise (overlapping fields), so its cost
	// grows with the square of their number, fragments expanded, and faster
	// still with the number of fragment spreads: count both first, cheaply,
	// and refuse a document that could only fail the field cap later.
	if maxFields > 0 {
		maxSpreads := max(maxFields/fieldsPerSpread, 1)
		fields, spreads := countSelections(doc, maxFields+1, maxSpreads+1)
		if fields > maxFields {
			return nil, gqlerror.List{gqlerror.Errorf("The query selects more than %d fields (graphQLMaxFields).", maxFields)}, codeValidationFailed
		}
		if spreads > maxSpreads {
			return nil, gqlerror.List{gqlerror.Errorf("The query spreads fragments more than %d times, fragments expanded (a quarter of graphQLMaxFields).", maxSpreads)}, codeValidationFailed
		}
	}
	if errs := validator.Validate(m.schema, doc); len(errs) > 0 {
		return nil, errs, codeValidationFailed
	}
	m.docsMu.Lock()
	if len(m.docs) >= MaxCachedDocuments || m.docs == nil {
		m.docs = map[string]*ast.QueryDocument{}
	}
	m.docs[query] = doc
	m.docsMu.Unlock()
	return doc, nil, ""
}

// rootKind says what a generated root field does.
type rootKind int

const (
	rootGet rootKind = iota
	rootFind
	rootCreate
	rootUpdate
	rootDelete
)

type rootField struct {
	kind  rootKind
	class *classModel
}

// classModel is one class as GraphQL shows it.
type classModel struct {
	class  string // Parse class name
	typ    string // GraphQL type name
	single string // lowerCamel of typ: the get field and payload field
	// fields are the class's own fields as GraphQL shows them (no
	// objectId, createdAt, updatedAt, ACL; pointers and relations only to
	// classes the schema holds), sorted by name.
	fields []fieldModel
	byName map[string]fieldModel
	// cfg is the class's classConfigs entry (nil: none); roots its root
	// field names under it.
	cfg   *classConfig
	roots rootNames
}

type fieldModel struct {
	name string
	schema.Field
	target *classModel // Pointer and Relation
}

// reservedTypes are names the fixed part of the schema uses; a class whose
// type name would collide is left out of GraphQL.
var reservedTypes = map[string]bool{
	"String": true, "Boolean": true, "Int": true, "Float": true, "ID": true, "ArrayResult": true,
	"Query": true, "Mutation": true, "Subscription": true, "Viewer": true, "PageInfo": true,
	"Node": true, "ParseObject": true, "Class": true, "Element": true, "ACL": true, "GeoPoint": true,
	"FileInfo": true, "Upload": true, "Date": true, "Object": true, "Any": true, "Bytes": true, "File": true,
}

// alwaysClasses are the built-in classes GraphQL always shows, as Parse
// Server does, even before their first object exists.
var alwaysClasses = []string{"_User", "_Role", "_Session", "_Installation"}

// systemFields are the ParseObject fields every class type has.
var systemFields = map[string]bool{"objectId": true, "createdAt": true, "updatedAt": true, "ACL": true}

// modelConfig is what shapes a generated schema besides the classes.
type modelConfig struct {
	// keep says which classes to show (nil: all).
	keep func(class string) bool
	// custom is graphQLCustomTypeDefs: more schema language, loaded after
	// the generated schema so it may extend Query and Mutation.
	custom string
	// functions are the cloud functions CloudCodeFunction enumerates;
	// when anyFunction is set, functionName is a String instead.
	functions   []string
	anyFunction bool
	// classConfigs are /graphql-config's per-class settings.
	classConfigs map[string]*classConfig
	// subscribes says which classes get subscription fields (the classes
	// LiveQuery publishes); nil generates no Subscription type.
	subscribes func(class string) bool
}

// buildModel generates and validates the schema for classes (plus the
// built-in classes Parse Server always shows).
func buildModel(classes []*schema.Class, cfg modelConfig) (*model, error) {
	keep, custom := cfg.keep, cfg.custom
	m := &model{classes: map[string]*classModel{}, byType: map[string]*classModel{},
		query: map[string]rootField{}, mutation: map[string]rootField{}, subscription: map[string]subscriptionField{}}
	have := map[string]*schema.Class{}
	for _, c := range classes {
		have[c.Name] = c
	}
	for _, name := range alwaysClasses {
		if have[name] == nil {
			c := schema.NewClass(name)
			for k, f := range schema.BuiltinFields(name) {
				c.Fields[k] = f
			}
			have[name] = c
		}
	}
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	// The built-in classes claim their names first: Viewer's User is _User
	// even when a class called User exists.
	sort.Slice(names, func(i, j int) bool {
		bi, bj := slices.Contains(alwaysClasses, names[i]), slices.Contains(alwaysClasses, names[j])
		if bi != bj {
			return bi
		}
		return names[i] < names[j]
	})
	taken := takenNames()
	for _, n := range names {
		typ := typeName(n)
		if keep != nil && !keep(n) || !validName(typ) || strings.HasPrefix(n, "_") && !slices.Contains(alwaysClasses, n) {
			continue
		}
		cm := &classModel{class: n, typ: typ, single: lowerCamel(typ), byName: map[string]fieldModel{}, cfg: cfg.classConfigs[n]}
		cm.roots = cm.cfg.roots(cm)
		// A class whose names would collide with the fixed schema or an
		// earlier class (GameScore and gameScore, Number, Person and
		// Persons) is left out rather than breaking the whole schema.
		generated := cm.names()
		if slices.ContainsFunc(generated, func(name string) bool { return taken[name] }) {
			continue
		}
		for _, name := range generated {
			taken[name] = true
		}
		m.classes[n], m.byType[typ] = cm, cm
	}
	for _, cm := range m.classes {
		m.addFields(cm, have[cm.class])
	}
	m.sdl = m.generate(cfg)
	sources := []*ast.Source{{Name: "quarry.graphql", Input: m.sdl}}
	if strings.TrimSpace(custom) != "" {
		custom, m.dropped = customFor(m.sdl, custom)
		sources = append(sources, &ast.Source{Name: "graphQLCustomTypeDefs", Input: custom})
		m.sdl += "\n" + custom
	}
	s, err := gqlparser.LoadSchema(sources...)
	if err != nil {
		return nil, fmt.Errorf("GraphQL schema: %w", err)
	}
	m.schema = s
	return m, nil
}

// addFields models the fields of c that GraphQL shows: not the system
// fields, not internal ones, pointers and relations only to classes the
// schema holds; _User's password is kept for inputs only (authData, as in
// Parse Server, is a field like any other).
func (m *model) addFields(cm *classModel, c *schema.Class) {
	for name, f := range c.Fields {
		if systemFields[name] || name == "id" || !validName(name) || strings.HasPrefix(name, "_") {
			continue
		}
		if cm.class == "_User" && name == "password" {
			cm.byName[name] = fieldModel{name: name, Field: f}
			continue
		}
		fm := fieldModel{name: name, Field: f}
		if f.Type == schema.TypePointer || f.Type == schema.TypeRelation {
			if fm.target = m.classes[f.TargetClass]; fm.target == nil {
				continue
			}
		}
		cm.fields = append(cm.fields, fm)
		cm.byName[name] = fm
	}
	sort.Slice(cm.fields, func(i, j int) bool { return cm.fields[i].name < cm.fields[j].name })
}

// names lists every type and root field name a class generates, root
// fields prefixed with "." so they never meet type names.
func (cm *classModel) names() []string {
	t := cm.typ
	out := []string{t}
	for _, root := range []string{cm.roots.get, cm.roots.find, cm.roots.create, cm.roots.update, cm.roots.delete} {
		if root != "" {
			out = append(out, "."+root)
		}
	}
	for _, suffix := range []string{"PointerInput", "RelationInput", "WhereInput", "RelationWhereInput", "Order", "Connection", "Edge"} {
		out = append(out, t+suffix)
	}
	for _, kind := range []string{"Create", "Update", "Delete"} {
		out = append(out, kind+t+"Input", kind+t+"Payload", kind+t+"FieldsInput")
	}
	return out
}

// takenNames are the names of the fixed schema: its types, and its root
// fields prefixed with ".".
func takenNames() map[string]bool {
	taken := map[string]bool{}
	for name := range reservedTypes {
		taken[name] = true
	}
	doc, err := parser.ParseSchema(&ast.Source{Input: fixedSDL})
	if err == nil {
		for _, d := range doc.Definitions {
			taken[d.Name] = true
		}
	}
	for _, f := range []string{"health", "viewer", "node", "class", "classes", "signUp", "logIn", "logInWith", "logOut", "createFile",
		"resetPassword", "confirmResetPassword", "sendVerificationEmail", "challenge", "callCloudCode", "createClass", "updateClass", "deleteClass", "cloudConfig", "updateCloudConfig"} {
		taken["."+f] = true
	}
	return taken
}

// sortedClasses lists the class models by type name.
func (m *model) sortedClasses() []*classModel {
	out := make([]*classModel, 0, len(m.classes))
	for _, cm := range m.classes {
		out = append(out, cm)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].typ < out[j].typ })
	return out
}

func (m *model) generate(cfg modelConfig) string {
	var b strings.Builder
	b.WriteString(fixedSDL)
	classes := m.sortedClasses()
	union := []string{"Element"}
	var q, mu, extra strings.Builder
	for _, cm := range classes {
		union = append(union, cm.typ)
		writeClass(&b, cm)
		r := cm.roots
		if r.get != "" {
			fmt.Fprintf(&q, "  %s(id: ID!, options: ReadOptionsInput): %s!\n", r.get, cm.typ)
			m.query[r.get] = rootField{rootGet, cm}
		}
		if r.find != "" {
			fmt.Fprintf(&q, "  %s%s: %sConnection!\n", r.find, connectionArgs(cm.typ), cm.typ)
			m.query[r.find] = rootField{rootFind, cm}
		}
		for _, op := range []struct {
			verb, name string
			kind       rootKind
		}{{"create", r.create, rootCreate}, {"update", r.update, rootUpdate}, {"delete", r.delete, rootDelete}} {
			name := op.name
			if name == "" {
				continue
			}
			title := strings.ToUpper(op.verb[:1]) + op.verb[1:]
			fmt.Fprintf(&mu, "  %s(input: %s%sInput!): %s%sPayload\n", name, title, cm.typ, title, cm.typ)
			m.mutation[name] = rootField{op.kind, cm}
		}
	}
	fmt.Fprintf(&b, "union ArrayResult = %s\n\n", strings.Join(union, " | "))
	b.WriteString("type Query {\n  health: Boolean!\n  viewer: Viewer!\n  node(id: ID!): Node\n")
	b.WriteString("  class(name: String!): Class!\n  classes: [Class!]!\n  cloudConfig(paramName: String!): ConfigValue!\n")
	b.WriteString(q.String())
	b.WriteString("}\n\ntype Mutation {\n")
	b.WriteString(fixedMutations)
	b.WriteString(mu.String())
	writeCloudCode(&b, &extra, cfg)
	b.WriteString("}\n\n")
	b.WriteString(extra.String())
	m.writeSubscriptions(&b, classes, cfg.subscribes)
	return b.String()
}

// writeCloudCode adds callCloudCode to the mutations (b) and its input to
// the types (extra): functionName is the enum CloudCodeFunction of the
// defined functions, as Parse Server generates it, and without any defined
// function there is no callCloudCode.
func writeCloudCode(b, extra *strings.Builder, cfg modelConfig) {
	typ := "String"
	if !cfg.anyFunction {
		var values []string
		for _, f := range cfg.functions {
			if validName(f) && f != "true" && f != "false" && f != "null" {
				values = append(values, f)
			}
		}
		if len(values) == 0 {
			return
		}
		typ = "CloudCodeFunction"
		fmt.Fprintf(extra, "enum CloudCodeFunction {\n  %s\n}\n\n", strings.Join(values, "\n  "))
	}
	b.WriteString("  callCloudCode(input: CallCloudCodeInput!): CallCloudCodePayload\n")
	fmt.Fprintf(extra, "input CallCloudCodeInput {\n  functionName: %s!\n  params: Object\n  clientMutationId: String\n}\n", typ)
}

func connectionArgs(typ string) string {
	return fmt.Sprintf("(where: %[1]sWhereInput, order: [%[1]sOrder!], skip: Int, first: Int, after: String, last: Int, before: String, options: ReadOptionsInput)", typ)
}

// graphQLTypes names a field type in the schema: its value (out), what a
// create or update takes (in) and its where input (where). For pointers
// and relations the names follow the target class (%s), and a type not
// listed (Object and open types) is Object.
var graphQLTypes = map[schema.Type]struct{ out, in, where string }{
	schema.TypeString:   {"String", "String", "StringWhereInput"},
	schema.TypeNumber:   {"Float", "Float", "NumberWhereInput"},
	schema.TypeBoolean:  {"Boolean", "Boolean", "BooleanWhereInput"},
	schema.TypeDate:     {"Date", "Date", "DateWhereInput"},
	schema.TypeArray:    {"[ArrayResult]", "[Any]", "ArrayWhereInput"},
	schema.TypePointer:  {"%s", "%sPointerInput", "%sRelationWhereInput"},
	schema.TypeRelation: {"%sConnection!", "%sRelationInput", "%sRelationWhereInput"},
	schema.TypeFile:     {"FileInfo", "FileInput", "FileWhereInput"},
	schema.TypeGeoPoint: {"GeoPoint", "GeoPointInput", "GeoPointWhereInput"},
	schema.TypePolygon:  {"[GeoPoint!]", "[GeoPointInput!]", "PolygonWhereInput"},
	schema.TypeBytes:    {"Bytes", "Bytes", "BytesWhereInput"},
}

// typeNames are f's names from graphQLTypes, with its target class filled in.
func typeNames(f fieldModel) (out, in, where string) {
	names, ok := graphQLTypes[f.Type]
	if !ok {
		return "Object", "Object", "ObjectWhereInput"
	}
	if f.Type == schema.TypePointer || f.Type == schema.TypeRelation {
		t := f.target.typ
		return fmt.Sprintf(names.out, t), fmt.Sprintf(names.in, t), fmt.Sprintf(names.where, t)
	}
	return names.out, names.in, names.where
}

// outputType is the GraphQL type of a field's value.
func outputType(f fieldModel) string { out, _, _ := typeNames(f); return out }

// inputType is the GraphQL type a create or update takes for a field.
func inputType(f fieldModel) string { _, in, _ := typeNames(f); return in }

// whereType is the where input of a field.
func whereType(f fieldModel) string { _, _, where := typeNames(f); return where }

func writeClass(b *strings.Builder, cm *classModel) {
	t := cm.typ
	fmt.Fprintf(b, "type %s implements ParseObject & Node {\n  id: ID!\n  objectId: ID!\n  createdAt: Date!\n  updatedAt: Date!\n  ACL: ACL!\n", t)
	for _, f := range cm.fields {
		if !cm.cfg.shows(f.name) {
			continue
		}
		if f.Type == schema.TypeRelation {
			fmt.Fprintf(b, "  %s%s: %s\n", f.name, connectionArgs(f.target.typ), outputType(f))
			continue
		}
		fmt.Fprintf(b, "  %s: %s\n", f.name, outputType(f))
	}
	if cm.class == "_User" {
		b.WriteString("  authDataResponse: Object\n")
	}
	b.WriteString("}\n\n")
	for _, kind := range []string{"Create", "Update"} {
		fmt.Fprintf(b, "input %s%sFieldsInput {\n  ACL: ACLInput\n", kind, t)
		for _, f := range inputFields(cm) {
			if !cm.cfg.takes(f.name, kind == "Update") && !(cm.class == "_User" && kind == "Create" && (f.name == "username" || f.name == "password")) {
				continue // a sign-up always takes a username and password
			}
			typ := inputType(f)
			if kind == "Create" && f.Required && f.DefaultValue == nil {
				typ += "!"
			}
			fmt.Fprintf(b, "  %s: %s\n", f.name, typ)
		}
		b.WriteString("}\n\n")
	}
	if cm.class == "_User" {
		// logInWith's extra fields for a new user: neither username nor
		// password, which authData replaces, nor authData, its own argument.
		b.WriteString("input UserLoginWithInput {\n  ACL: ACLInput\n")
		for _, f := range cm.fields {
			if f.name != "username" && f.name != "authData" {
				fmt.Fprintf(b, "  %s: %s\n", f.name, inputType(f))
			}
		}
		b.WriteString("}\n\n")
	}
	fmt.Fprintf(b, "input %[1]sPointerInput {\n  link: ID\n  createAndLink: Create%[1]sFieldsInput\n}\n\n", t)
	fmt.Fprintf(b, "input %[1]sRelationInput {\n  add: [ID!]\n  remove: [ID!]\n  createAndAdd: [Create%[1]sFieldsInput!]\n}\n\n", t)
	fmt.Fprintf(b, "input %sWhereInput {\n  id: IdWhereInput\n", t)
	for _, sys := range []struct{ name, typ string }{{"objectId", "IdWhereInput"}, {"createdAt", "DateWhereInput"},
		{"updatedAt", "DateWhereInput"}, {"ACL", "ObjectWhereInput"}} {
		if cm.cfg.constrains(sys.name) {
			fmt.Fprintf(b, "  %s: %s\n", sys.name, sys.typ)
		}
	}
	for _, f := range cm.fields {
		if f.name == "OR" || f.name == "AND" || f.name == "NOR" || !cm.cfg.constrains(f.name) {
			continue // the where input's own combinators, or a field not offered
		}
		fmt.Fprintf(b, "  %s: %s\n", f.name, whereType(f))
	}
	fmt.Fprintf(b, "  OR: [%[1]sWhereInput!]\n  AND: [%[1]sWhereInput!]\n  NOR: [%[1]sWhereInput!]\n}\n\n", t)
	fmt.Fprintf(b, "input %[1]sRelationWhereInput {\n  have: %[1]sWhereInput\n  haveNot: %[1]sWhereInput\n  exists: Boolean\n}\n\n", t)
	// An enum needs a value: with every sort field turned off, order
	// still takes objectId ascending.
	values := cm.cfg.sorts(orderFields(cm))
	if len(values) == 0 {
		values = []string{"objectId_ASC"}
	}
	fmt.Fprintf(b, "enum %sOrder {\n  %s\n}\n\n", t, strings.Join(values, "\n  "))
	fmt.Fprintf(b, "type %[1]sConnection {\n  edges: [%[1]sEdge]\n  pageInfo: PageInfo!\n  count: Int!\n}\n\n", t)
	fmt.Fprintf(b, "type %[1]sEdge {\n  node: %[1]s\n  cursor: String!\n}\n\n", t)
	fmt.Fprintf(b, "input Create%[1]sInput {\n  fields: Create%[1]sFieldsInput\n  clientMutationId: String\n}\n\n", t)
	fmt.Fprintf(b, "input Update%[1]sInput {\n  id: ID!\n  fields: Update%[1]sFieldsInput\n  clientMutationId: String\n}\n\n", t)
	fmt.Fprintf(b, "input Delete%[1]sInput {\n  id: ID!\n  clientMutationId: String\n}\n\n", t)
	for _, kind := range []string{"Create", "Update", "Delete"} {
		fmt.Fprintf(b, "type %s%sPayload {\n  %s: %s!\n  clientMutationId: String\n}\n\n", kind, t, cm.single, t)
	}
}

// inputFields are the fields a create or update may set: the shown fields
// plus _User's password.
func inputFields(cm *classModel) []fieldModel {
	out := slices.Clone(cm.fields)
	if f, ok := cm.byName["password"]; ok && cm.class == "_User" {
		out = append(out, f)
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	}
	return out
}

// orderFields are the names an order enum offers: every field, whatever
// its type (ACL, relations, files and polygons too), as Parse Server
// generates it.
func orderFields(cm *classModel) []string {
	names := []string{"id", "objectId", "createdAt", "updatedAt", "ACL"}
	for _, f := range cm.fields {
		names = append(names, f.name)
	}
	return names
}
