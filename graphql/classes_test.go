package graphql_test

import (
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

const scoreFields = `fragment F on GameScore { objectId playerName score cheat tags { ... on Element { value } } meta when location { latitude longitude } }`

// TestClassOperations runs every generated per-class operation through
// HTTP: a class made with createClass, then create, get, node, the
// connection with where/order/skip/first/after/last/count, update
// (null unsets) and delete.
func TestClassOperations(t *testing.T) {
	srv := start(t, nil)
	m := servertest.Master()
	id := func(key string) func(map[string]string) map[string]any {
		return func(s map[string]string) map[string]any { return map[string]any{"id": s[key]} }
	}
	run(t, srv, []step{
		{name: "health", query: `{ health }`, want: map[string]string{"data": `{"health":true}`}},
		{name: "createClass", headers: m, query: `mutation { createClass(input: {name: "GameScore", schemaFields: {
			addNumbers: [{name: "score"}], addStrings: [{name: "playerName"}], addBooleans: [{name: "cheat"}],
			addArrays: [{name: "tags"}], addObjects: [{name: "meta"}], addDates: [{name: "when"}],
			addGeoPoint: {name: "location"}}}) { class { name schemaFields { name __typename } } } }`,
			want: map[string]string{"data.createClass.class.name": `"GameScore"`,
				`data.createClass.class.schemaFields.#(name=="score").__typename`: `"SchemaNumberField"`}},
		{name: "create ann", query: `mutation { createGameScore(input: {clientMutationId: "c1", fields: {playerName: "ann", score: 10, cheat: false,
			tags: ["a", 1], meta: {level: 2}, when: "2024-01-02T03:04:05.000Z", location: {latitude: 1, longitude: 2}}}) {
			clientMutationId gameScore { id ...F } } } ` + scoreFields,
			want: map[string]string{"data.createGameScore.clientMutationId": `"c1"`,
				"data.createGameScore.gameScore.score": `10`, "data.createGameScore.gameScore.tags": `[{"value":"a"},{"value":1}]`,
				"data.createGameScore.gameScore.meta": `{"level":2}`, "data.createGameScore.gameScore.when": `"2024-01-02T03:04:05.000Z"`,
				"data.createGameScore.gameScore.location": `{"latitude":1,"longitude":2}`},
			save: map[string]string{"ann": "data.createGameScore.gameScore.id", "annOID": "data.createGameScore.gameScore.objectId"}},
		{name: "create bob", query: `mutation { createGameScore(input: {fields: {playerName: "bob", score: 20, cheat: true, meta: {level: 5}}}) { gameScore { id } } }`,
			save: map[string]string{"bob": "data.createGameScore.gameScore.id"}},
		{name: "create cid", query: `mutation { createGameScore(input: {fields: {playerName: "cid", score: 30}}) { gameScore { id } } }`},
		{name: "get by global id", query: `query($id: ID!) { gameScore(id: $id) { playerName } }`, vars: id("ann"),
			want: map[string]string{"data.gameScore.playerName": `"ann"`}},
		{name: "get by objectId", query: `query($id: ID!) { gameScore(id: $id) { playerName } }`, vars: id("annOID"),
			want: map[string]string{"data.gameScore.playerName": `"ann"`}},
		{name: "node", query: `query($id: ID!) { node(id: $id) { id __typename ... on GameScore { score } } }`, vars: id("ann"),
			want: map[string]string{"data.node.__typename": `"GameScore"`, "data.node.score": `10`}},
		{name: "where greaterThan, order DESC, count", query: `{ gameScores(where: {score: {greaterThan: 15}}, order: [score_DESC]) {
			count edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.count": `2`, "data.gameScores.edges.#.node.playerName": `["cid","bob"]`}},
		{name: "first and pageInfo", query: `{ gameScores(order: [score_ASC], first: 1) { edges { cursor node { playerName } } pageInfo { hasNextPage hasPreviousPage endCursor } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["ann"]`, "data.gameScores.pageInfo.hasNextPage": `true`,
				"data.gameScores.pageInfo.hasPreviousPage": `false`},
			save: map[string]string{"cursor": "data.gameScores.pageInfo.endCursor"}},
		{name: "after", query: `query($c: String) { gameScores(order: [score_ASC], first: 1, after: $c) { edges { node { playerName } } pageInfo { hasPreviousPage } } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"c": s["cursor"]} },
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["bob"]`, "data.gameScores.pageInfo.hasPreviousPage": `true`}},
		{name: "number variables", query: `query($min: Float, $n: Int) { gameScores(where: {score: {greaterThan: $min}, meta: {exists: true}}, first: $n, order: [score_ASC]) {
			edges { node { playerName } } } x: gameScores(where: {meta: {equalTo: {key: "level", value: 5}}}) { count } y: health @include(if: false) }`,
			vars: func(map[string]string) map[string]any { return map[string]any{"min": 5, "n": 1} },
			want: map[string]string{"data": `{"gameScores":{"edges":[{"node":{"playerName":"ann"}}]},"x":{"count":1}}`}},
		{name: "one value given by a variable of list type is a list", query: `query($o: [GameScoreOrder!], $in: [String], $w: [GameScoreWhereInput!]) {
			a: gameScores(order: $o) { edges { node { playerName } } } b: gameScores(where: {playerName: {in: $in}}) { count }
			c: gameScores(where: {OR: $w}) { count } }`,
			vars: func(map[string]string) map[string]any {
				return map[string]any{"o": "score_DESC", "in": "bob", "w": map[string]any{"score": map[string]any{"lessThan": 15}}}
			},
			want: map[string]string{"data": `{"a":{"edges":[{"node":{"playerName":"cid"}},{"node":{"playerName":"bob"}},{"node":{"playerName":"ann"}}]},"b":{"count":1},"c":{"count":1}}`}},
		{name: "skip", query: `{ gameScores(order: [score_ASC], skip: 2) { edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["cid"]`}},
		{name: "last", query: `{ gameScores(order: [score_ASC], last: 2) { edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["bob","cid"]`}},
		{name: "bad cursor", query: `{ gameScores(after: "nope") { count } }`,
			want: map[string]string{"errors.0.extensions.code": `102`, "errors.0.message": `"After is not a valid cursor"`}},
		{name: "negative skip", query: `{ gameScores(skip: -1) { count } }`,
			want: map[string]string{"errors.0.extensions.code": `102`}},
		{name: "in and notIn", query: `{ a: gameScores(where: {playerName: {in: ["ann", "cid"]}}, order: [playerName_ASC]) { edges { node { playerName } } }
			b: gameScores(where: {playerName: {notIn: ["ann", "cid"]}}) { edges { node { playerName } } } }`,
			want: map[string]string{"data.a.edges.#.node.playerName": `["ann","cid"]`, "data.b.edges.#.node.playerName": `["bob"]`}},
		{name: "equalTo, notEqualTo, lessThanOrEqualTo", query: `{ a: gameScores(where: {playerName: {equalTo: "bob"}}) { count }
			b: gameScores(where: {playerName: {notEqualTo: "bob"}}) { count } c: gameScores(where: {score: {lessThanOrEqualTo: 20}}) { count }
			d: gameScores(where: {score: {lessThan: 20, greaterThanOrEqualTo: 10}}) { count } }`,
			want: map[string]string{"data.a.count": `1`, "data.b.count": `2`, "data.c.count": `2`, "data.d.count": `1`}},
		{name: "exists and boolean", query: `{ a: gameScores(where: {cheat: {exists: false}}) { edges { node { playerName } } }
			b: gameScores(where: {cheat: {equalTo: true}}) { edges { node { playerName } } } }`,
			want: map[string]string{"data.a.edges.#.node.playerName": `["cid"]`, "data.b.edges.#.node.playerName": `["bob"]`}},
		{name: "matchesRegex with options", query: `{ gameScores(where: {playerName: {matchesRegex: "^B", options: "i"}}) { edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["bob"]`}},
		{name: "object key", query: `{ gameScores(where: {meta: {greaterThan: {key: "level", value: 3}}}) { edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["bob"]`}},
		{name: "OR", query: `{ gameScores(where: {OR: [{score: {equalTo: 10}}, {score: {equalTo: 30}}]}, order: [score_ASC]) { edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["ann","cid"]`}},
		{name: "id where", query: `query($id: ID) { gameScores(where: {id: {equalTo: $id}}) { edges { node { playerName } } } }`,
			vars: func(s map[string]string) map[string]any { return map[string]any{"id": s["bob"]} },
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["bob"]`}},
		{name: "date where", query: `{ gameScores(where: {when: {greaterThan: "2024-01-01T00:00:00.000Z"}}) { edges { node { playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node.playerName": `["ann"]`}},
		{name: "geo nearSphere", query: `{ gameScores(where: {location: {nearSphere: {latitude: 1, longitude: 2.1}, maxDistanceInKilometers: 50}}) { count } }`,
			want: map[string]string{"data.gameScores.count": `1`}},
		{name: "array element", query: `query($id: ID!) { gameScore(id: $id) { tags { ... on Element { value } } } }`, vars: id("ann"),
			want: map[string]string{"data.gameScore.tags": `[{"value":"a"},{"value":1}]`}},
		{name: "update; null unsets", query: `mutation($id: ID!) { updateGameScore(input: {id: $id, fields: {score: 11, playerName: null}}) { gameScore { score playerName } } }`,
			vars: id("ann"), want: map[string]string{"data.updateGameScore.gameScore": `{"score":11,"playerName":null}`}},
		{name: "unset reads as null", query: `{ gameScores(where: {playerName: {exists: false}}) { edges { node { score playerName } } } }`,
			want: map[string]string{"data.gameScores.edges.#.node": `[{"score":11,"playerName":null}]`}},
		{name: "delete returns the object", query: `mutation($id: ID!) { deleteGameScore(input: {id: $id}) { gameScore { playerName } } }`,
			vars: id("bob"), want: map[string]string{"data.deleteGameScore.gameScore.playerName": `"bob"`}},
		{name: "deleted is gone", query: `query($id: ID!) { gameScore(id: $id) { playerName } }`, vars: id("bob"),
			want: map[string]string{"errors.0.extensions.code": `101`, "data": `null`}},
		{name: "classes needs the master key", query: `{ classes { name } }`,
			want: map[string]string{"errors.0.extensions.code": `119`}},
		{name: "deleteClass refuses a class with objects", headers: m, query: `mutation { deleteClass(input: {name: "GameScore"}) { class { name } } }`,
			want: map[string]string{"errors.0.extensions.code": `255`}},
	})
}
