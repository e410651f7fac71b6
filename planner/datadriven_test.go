package planner

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarrydata/quarry/matcher"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/where"
)

// The data-driven planner tests: each case in planner/testdata/*.txt names
// the indexes, a where and the query parameters, and after a "----" line
// the plan the planner must choose (access, reason, sort, the resolved
// where, and the residual: the part of it the matcher still runs after
// the access), how many objects it examined and which objects came back,
// or the error it must refuse with. All cases run over the fixed dataset
// built by ddSource. Regenerate the expected sections
// after an intended change with
//
//	go test ./planner -run TestDataDriven -update
//
// and review the diff.

var ddUpdate = flag.Bool("update", false, "rewrite the expected sections of planner/testdata/*.txt")

// ddNow is the clock of every data-driven case, so $relativeTime is stable.
var ddNow = time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)

// ddItems is the size of the Item class: larger than the maxscan the
// refusal cases use, small enough to read every result list.
const ddItems = 40

var ddNames = []string{"apple", "apricot", "banana", "Berry", "cherry", "date", "elder", "fig"}

// ddSource builds the fixed dataset with the given indexes ("field" on
// Item, or "Class.field").
//
//	Item i00..i39: score i%10; name ddNames[i%8]; tags ["t<i%3>", "t<i%5>"]
//	    (the two may coincide); owner Pointer Owner o<i%4> except every
//	    7th item (i%7==6) has none; flag i%2==0 except every 5th item
//	    (i%5==4) has none; info {"city": c<i%3>, "zip": 1000+i};
//	    createdAt 2024-01-01 00:00 + i hours; updatedAt createdAt + 1 day.
//	Owner o0..o3: name ann/bob/cy/dee; vip for o1 and o3; favorites, a
//	    Relation to Item: o0 holds i01 i02 i03, o1 holds i03 i30.
//	Empty: no objects at all.
func ddSource(t testing.TB, indexes []string) *memSource {
	src := newMemSource()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < ddItems; i++ {
		created := base.Add(time.Duration(i) * time.Hour)
		o := schema.Object{
			"objectId":  fmt.Sprintf("i%02d", i),
			"createdAt": schema.FormatTime(created),
			"updatedAt": schema.FormatTime(created.Add(24 * time.Hour)),
			"score":     float64(i % 10),
			"name":      ddNames[i%len(ddNames)],
			"tags":      []any{fmt.Sprintf("t%d", i%3), fmt.Sprintf("t%d", i%5)},
			"info":      map[string]any{"city": fmt.Sprintf("c%d", i%3), "zip": float64(1000 + i)},
		}
		if i%7 != 6 {
			o["owner"] = schema.Pointer("Owner", fmt.Sprintf("o%d", i%4))
		}
		if i%5 != 4 {
			o["flag"] = i%2 == 0
		}
		src.put("Item", o)
	}
	for i, name := range []string{"ann", "bob", "cy", "dee"} {
		src.put("Owner", schema.Object{
			"objectId":  fmt.Sprintf("o%d", i),
			"createdAt": schema.FormatTime(base),
			"updatedAt": schema.FormatTime(base),
			"name":      name,
			"vip":       i%2 == 1,
		})
	}
	src.fields["Item"]["createdAt"] = schema.Field{Type: schema.TypeDate}
	src.fields["Item"]["updatedAt"] = schema.Field{Type: schema.TypeDate}
	src.fields["Owner"]["favorites"] = schema.Field{Type: schema.TypeRelation, TargetClass: "Item"}
	for owner, items := range map[string][]string{"o0": {"i01", "i02", "i03"}, "o1": {"i03", "i30"}} {
		for _, id := range items {
			src.db.SetRelation("Owner", "favorites", owner, id, true)
		}
	}
	src.db.Collection("Empty", true)
	for _, ix := range indexes {
		class, field, ok := strings.Cut(ix, ".")
		if !ok || (class != "Item" && class != "Owner") {
			class, field = "Item", ix
		}
		if err := src.db.Collection(class, false).EnsureIndex(field); err != nil {
			t.Fatalf("index %q: %v", ix, err)
		}
	}
	return src
}

// ddCase is one case of a testdata file.
type ddCase struct {
	line     int      // line of the "----" separator, for messages
	input    []string // the lines before "----", comments and blank lines included
	expected []string // the lines after it
	args     map[string]string
}

func parseDDFile(t *testing.T, path string) (cases []*ddCase, trailer []string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	cur := &ddCase{args: map[string]string{}}
	inExpected := false
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if inExpected {
			if strings.TrimSpace(line) == "" {
				cases = append(cases, cur)
				cur = &ddCase{args: map[string]string{}}
				inExpected = false
				cur.input = append(cur.input, line)
				continue
			}
			cur.expected = append(cur.expected, line)
			continue
		}
		if line == "----" {
			cur.line = n
			inExpected = true
			continue
		}
		cur.input = append(cur.input, line)
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key, val, ok := strings.Cut(trimmed, ":")
		if !ok {
			t.Fatalf("%s:%d: want \"key: value\", got %q", path, n, line)
		}
		cur.args[strings.TrimSpace(key)] = strings.TrimSpace(val)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if inExpected {
		cases = append(cases, cur)
		return cases, nil
	}
	for _, l := range cur.input {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
			t.Fatalf("%s: the last case has no \"----\" line", path)
		}
	}
	return cases, cur.input
}

func TestDataDriven(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			cases, trailer := parseDDFile(t, path)
			var out strings.Builder
			for _, c := range cases {
				got := runDDCase(t, path, c)
				if !*ddUpdate && strings.Join(got, "\n") != strings.Join(c.expected, "\n") {
					t.Errorf("%s:%d:\n%s\ngot:\n%s\nwant:\n%s", path, c.line, strings.Join(c.input, "\n"),
						strings.Join(got, "\n"), strings.Join(c.expected, "\n"))
				}
				for _, l := range c.input {
					out.WriteString(l + "\n")
				}
				out.WriteString("----\n")
				for _, l := range got {
					out.WriteString(l + "\n")
				}
			}
			for _, l := range trailer {
				out.WriteString(l + "\n")
			}
			if *ddUpdate {
				if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// runDDCase plans and runs one case and renders what the file expects.
func runDDCase(t *testing.T, path string, c *ddCase) []string {
	fail := func(format string, args ...any) []string {
		t.Fatalf("%s:%d: "+format, append([]any{path, c.line}, args...)...)
		return nil
	}
	for k := range c.args {
		switch k {
		case "class", "indexes", "where", "order", "skip", "limit", "count", "maxscan", "exempt", "warnonly":
		default:
			fail("unknown argument %q", k)
		}
	}
	q := Query{Class: "Item", Limit: 100}
	if v := c.args["class"]; v != "" {
		q.Class = v
	}
	if v := c.args["where"]; v != "" {
		if err := json.Unmarshal([]byte(v), &q.Where); err != nil {
			fail("where: %v", err)
		}
	}
	for _, part := range strings.Split(c.args["order"], ",") {
		if part = strings.TrimSpace(part); part != "" {
			desc := strings.HasPrefix(part, "-")
			q.Order = append(q.Order, SortKey{Path: strings.TrimPrefix(part, "-"), Desc: desc})
		}
	}
	atoi := func(key string, def int) int {
		v, ok := c.args[key]
		if !ok {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			fail("%s: %v", key, err)
		}
		return n
	}
	flagArg := func(key string) bool {
		v, ok := c.args[key]
		if !ok {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			fail("%s: %v", key, err)
		}
		return b
	}
	q.Skip, q.Limit = atoi("skip", 0), atoi("limit", 100)
	q.Count, q.Exempt = flagArg("count"), flagArg("exempt")
	var warned []string
	opts := Options{MaxScan: atoi("maxscan", 0), WarnOnly: flagArg("warnonly"),
		Warn: func(msg string) { warned = append(warned, msg) }, Now: func() time.Time { return ddNow }}

	var indexes []string
	for _, ix := range strings.FieldsFunc(c.args["indexes"], func(r rune) bool { return r == ',' || r == ' ' }) {
		indexes = append(indexes, ix)
	}
	src := ddSource(t, indexes)

	plan, err := Compile(src, q, opts)
	if err != nil {
		if pe, ok := schema.AsError(err); ok {
			return []string{fmt.Sprintf("error: %d %s", pe.Code, pe.Message)}
		}
		return []string{"error: " + err.Error()}
	}
	res, err := plan.Run()
	if err != nil {
		return []string{"run error: " + err.Error()}
	}
	ex := plan.Explain(res)
	lines := []string{
		fmt.Sprintf("access: %v", ex["access"]),
		fmt.Sprintf("reason: %v", ex["reason"]),
		fmt.Sprintf("sort: %v", ex["sort"]),
		fmt.Sprintf("where: %v", ex["where"]),
		fmt.Sprintf("residual: %v", ex["residual"]),
		fmt.Sprintf("examined: %d", res.Examined),
	}
	if q.Count {
		lines = append(lines, fmt.Sprintf("count: %d", res.Count))
	}
	for _, w := range warned {
		lines = append(lines, "warning: "+w)
	}
	if len(res.Objects) == 0 {
		lines = append(lines, "results: none")
	} else {
		lines = append(lines, "results: "+strings.Join(ids(res.Objects), " "))
	}
	ddCrossCheck(t, path, c, src, q, res)
	return lines
}

// ddCrossCheck compares a case's results with a brute-force matcher scan
// when the where needs no subquery resolution, so an -update cannot bless
// a wrong answer unnoticed.
func ddCrossCheck(t *testing.T, path string, c *ddCase, src *memSource, q Query, res Result) {
	tree, err := where.Parse(q.Where, where.Options{Now: func() time.Time { return ddNow },
		FieldType: func(n string) (schema.Type, bool) { return src.FieldType(q.Class, n) }})
	if err != nil {
		return
	}
	m, err := matcher.Compile(tree, nil)
	if err != nil {
		return // subqueries and relations are resolved by the planner only
	}
	var objs []schema.Object
	if coll := src.db.Collection(q.Class, false); coll != nil {
		coll.Scan(func(o schema.Object) bool {
			if m.Match(o) {
				objs = append(objs, o)
			}
			return true
		})
	}
	all := q
	all.Where = nil
	want, total := bruteForce(t, objs, all, src, bruteResolver{})
	if fmt.Sprint(ids(res.Objects)) != fmt.Sprint(ids(want)) || (q.Count && res.Count != total) {
		t.Errorf("%s:%d: planned results %v (count %d) differ from a scan: %v (count %d)",
			path, c.line, ids(res.Objects), res.Count, ids(want), total)
	}
}
