package scaleout

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// signUpRounds is how many usernames the clients race for.
const signUpRounds = 5

// sql opens a connection to the cluster's database, closed when t ends:
// what PostgreSQL holds is the durable truth the instances answer from.
func (cl *cluster) sql(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), cl.uri)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// testSignUpRace: every client signs up the same username at once (so
// three per instance), round after round. The model allows one 201 and
// 202 for every other; PostgreSQL must then hold one _User row for it.
func testSignUpRace(t *testing.T, cl *cluster) {
	h := newHistory()
	names := make([]string, signUpRounds)
	for round := range names {
		names[round] = fmt.Sprintf("racer%d-%d", round, newRand(round).Uint32())
		var start sync.WaitGroup
		start.Add(1)
		cl.parallel(func(c int) {
			in := signUpIn{username: names[round]}
			url := cl.at(c, round).url() + "/users"
			start.Wait()
			h.record(c, in, func() (any, bool) {
				rep := call("POST", url, map[string]any{"username": in.username, "password": "pw"})
				if rep.err != nil && rep.status == 0 {
					return signUpOut{}, true
				}
				return signUpOut{status: rep.status, code: rep.code()}, false
			})
		}, start.Done)
	}
	h.check(t, signUpModel, "sign-up races")
	conn := cl.sql(t)
	for _, name := range names {
		var rows int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM "_User" WHERE "username" = $1`, name).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Errorf("PostgreSQL holds %d _User rows with username %q, want 1", rows, name)
		}
	}
}

// readByIDRounds is how many objects each client creates and follows.
const readByIDRounds = 6

// testReadByID: each client creates an object on one instance, reads it
// on the next, updates it on the third, reads it back on the first,
// deletes it on the second and reads it on the third: every step starts
// after the previous one was answered, so each read must see it. Clients
// run at once on their own objects.
func testReadByID(t *testing.T, cl *cluster) {
	const class = "ByID"
	h := newHistory()
	cl.parallel(func(c int) {
		for round := range readByIDRounds {
			key := fmt.Sprintf("c%dr%d", c, round)
			var id string
			step := 0
			do := func(op, value string) {
				in := byIDIn{key: key, op: op, value: value}
				base := cl.at(c, round+step).url() + "/classes/" + class
				step++
				h.record(c, in, func() (any, bool) {
					var rep reply
					switch op {
					case "create":
						rep = call("POST", base, map[string]any{"v": value})
						id, _ = rep.body["objectId"].(string)
					case "get":
						rep = call("GET", base+"/"+id, nil)
					case "update":
						rep = call("PUT", base+"/"+id, map[string]any{"v": value})
					case "delete":
						rep = call("DELETE", base+"/"+id, nil)
					}
					switch {
					case rep.err != nil && rep.status == 0:
						return byIDOut{outcome: unknown}, op != "get"
					case rep.status == 404 && rep.code() == 101:
						return byIDOut{}, false
					case rep.status != 200 && rep.status != 201:
						return byIDOut{outcome: refused, detail: fmt.Sprintf("HTTP %d %v", rep.status, rep.body)}, false
					}
					v, _ := rep.body["v"].(string)
					return byIDOut{found: true, value: v}, false
				})
			}
			do("create", key+"-0")
			if id == "" {
				return // recorded as refused or unknown: the check reports it
			}
			do("get", "")
			do("update", key+"-1")
			do("get", "")
			do("delete", "")
			do("get", "")
		}
	})
	h.check(t, byIDModel, "reads by id after writes on other instances")
}

// schemaRaceRounds is how many new classes the instances race to create.
const schemaRaceRounds = 3

// testSchemaRace: the clients of each instance create objects of one new
// class at once, all with field x, each instance giving x its own type
// (Number, String, Boolean) and a field of its own (own_A ...). One type
// must win: every create that succeeded gave x that type, every other was
// refused with 111 (incorrect type), and PostgreSQL's schema of the class
// has x with the winner's type and the own field of every instance that
// succeeded.
func testSchemaRace(t *testing.T, cl *cluster) {
	types := []struct {
		name  string
		value any
	}{{"Number", 1}, {"String", "s"}, {"Boolean", true}}
	conn := cl.sql(t)
	for round := range schemaRaceRounds {
		class := fmt.Sprintf("Race%d", round)
		var mu sync.Mutex
		winners := map[string]bool{} // types of the creates that succeeded
		succeeded := map[string]bool{}
		var start sync.WaitGroup
		start.Add(1)
		cl.parallel(func(c int) {
			i := c % len(cl.instances)
			in := cl.instances[i]
			start.Wait()
			rep := call("POST", in.url()+"/classes/"+class, map[string]any{"x": types[i].value, "own_" + in.name: c})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case rep.status == 201:
				winners[types[i].name] = true
				succeeded["own_"+in.name] = true
			case rep.status == 400 && rep.code() == 111:
			default:
				t.Errorf("%s: create on %s with x of type %s: HTTP %d %v %v (want 201, or 111 for the losers)", class, in.name, types[i].name, rep.status, rep.body, rep.err)
			}
		}, start.Done)
		if len(winners) != 1 {
			t.Fatalf("%s: creates succeeded with x of types %v, want exactly one", class, winners)
		}
		var raw []byte
		if err := conn.QueryRow(context.Background(), `SELECT "schema" FROM "_SCHEMA" WHERE "className" = $1`, class).Scan(&raw); err != nil {
			t.Fatalf("%s: schema in PostgreSQL: %v", class, err)
		}
		var schema struct {
			Fields map[string]struct {
				Type string `json:"type"`
			} `json:"fields"`
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatalf("%s: schema %s: %v", class, raw, err)
		}
		for winner := range winners {
			if got := schema.Fields["x"].Type; got != winner {
				t.Errorf("%s: PostgreSQL's schema has x of type %q, the creates that succeeded gave %s (schema %s)", class, got, winner, raw)
			}
		}
		for own := range succeeded {
			if _, ok := schema.Fields[own]; !ok {
				t.Errorf("%s: PostgreSQL's schema lacks %s, which a create that succeeded added (schema %s)", class, own, raw)
			}
		}
	}
}

// authRounds is how many provider ids the clients race for, each way.
const authRounds = 3

// testAuthDataRace: every client signs up with one anonymous authData id
// at once, round after round, then every client links another id to a
// user of its own at once. The model allows one user for each id: one
// sign-up 201 and logins (200) as that user or 208 for the others, one
// link 200 and 208 for the others. PostgreSQL must then hold one user linked to
// each id.
func testAuthDataRace(t *testing.T, cl *cluster) {
	h := newHistory()
	conn := cl.sql(t)
	users := make([]string, cl.clients())
	for c := range users {
		body := mustCall(t, 201, "POST", cl.at(c, 0).url()+"/users",
			map[string]any{"username": fmt.Sprintf("linker%d-%d", c, newRand(c).Uint32()), "password": "pw"})
		users[c], _ = body["objectId"].(string)
	}
	for round := range 2 * authRounds {
		id := fmt.Sprintf("auth%d-%d", round, newRand(round).Uint64())
		link := round >= authRounds
		var start sync.WaitGroup
		start.Add(1)
		cl.parallel(func(c int) {
			in := authIn{id: id}
			method, url := "POST", cl.at(c, round).url()+"/users"
			if link {
				in.link = users[c]
				method, url = "PUT", url+"/"+users[c]
			}
			start.Wait()
			h.record(c, in, func() (any, bool) {
				rep := call(method, url, map[string]any{"authData": map[string]any{"anonymous": map[string]any{"id": id}}})
				if rep.status == 0 {
					t.Errorf("%s %s: no answer: %v", method, url, rep.err)
				}
				user, _ := rep.body["objectId"].(string)
				return authOut{status: rep.status, code: rep.code(), user: user}, false
			})
		}, start.Done)
		// Before the next round, whose link may replace this id (one
		// anonymous id per user). The whole row as text, whatever column
		// authData is kept in.
		var rows int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM "_User" AS u WHERE to_jsonb(u)::text LIKE '%' || $1 || '%'`, `"`+id+`"`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Errorf("PostgreSQL holds %d users linked to authData id %q, want 1", rows, id)
		}
	}
	h.check(t, authModel, "authData races")
}

// testDeviceTokenRace: every client saves a new installation (its own
// installationId) holding one deviceToken at once, round after round.
// Parse keeps a token in one installation per appIdentifier: each save
// removes the token's other holders, so whatever the order, every save
// succeeds and exactly one installation keeps the token. (Parse keeps no
// unique index on deviceToken, whose rules leave one token in several
// installations of different appIdentifiers: the instances take turns
// on the token, PostgreSQL has nothing to enforce.)
func testDeviceTokenRace(t *testing.T, cl *cluster) {
	var tokens []string
	for round := range signUpRounds {
		token := fmt.Sprintf("token%d-%d", round, newRand(round).Uint64())
		tokens = append(tokens, token)
		var start sync.WaitGroup
		start.Add(1)
		cl.parallel(func(c int) {
			url := cl.at(c, round).url() + "/installations"
			body := map[string]any{"installationId": fmt.Sprintf("iid-%s-%d", token, c), "deviceType": "android",
				"deviceToken": token, "appIdentifier": "com.example.race"}
			start.Wait()
			if rep := call("POST", url, body); rep.status != 201 && rep.status != 200 {
				t.Errorf("installation save %d of %s: HTTP %d %v %v", c, token, rep.status, rep.body, rep.err)
			}
		}, start.Done)
	}
	conn := cl.sql(t)
	for _, token := range tokens {
		var rows int
		if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM "_Installation" AS i WHERE to_jsonb(i)::text LIKE '%' || $1 || '%'`, `"`+token+`"`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Errorf("PostgreSQL holds %d installations with deviceToken %q, want 1", rows, token)
		}
	}
}
