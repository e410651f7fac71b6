package transport_test

import (
	"net/url"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// TestQueryOrderByTextScore: a $text query ordered by "$score" (or
// "-$score": both put the best matches first) returns the objects by
// relevance, each carrying its "$score" when asked for by keys or order;
// without $text the key orders nothing. The ranking: per searched word,
// one for holding it plus its share of the text's words, so "milk" alone
// ranks above "coffee coffee tea" for "coffee milk".
func TestQueryOrderByTextScore(t *testing.T) {
	srv := servertest.Start(t, nil)
	bodies := map[string]string{
		"once":     "coffee with a lot of other words around it here",
		"twice":    "coffee coffee tea",
		"both":     "coffee and milk",
		"none":     "tea only",
		"phrase":   "black coffee",
		"unrelate": "milk",
	}
	ids := map[string]string{}
	for label, body := range bodies {
		ids[mustCreate(t, srv, "Txt", map[string]any{"label": label, "body": body})] = label
	}
	search := func(term string) string {
		return whereQ(map[string]any{"body": map[string]any{"$text": map[string]any{"$search": map[string]any{"$term": term}}}})
	}
	for _, tc := range []struct {
		name, query string
		want        []string
		scored      bool
	}{
		{"by $score", search("coffee milk") + "&order=" + url.QueryEscape("$score") + "&keys=" + url.QueryEscape("label,$score"),
			[]string{"both", "unrelate", "twice", "phrase", "once"}, true},
		{"by -$score: the same, best first", search("coffee milk") + "&order=" + url.QueryEscape("-$score"),
			[]string{"both", "unrelate", "twice", "phrase", "once"}, true},
		{"$score then a field", search("coffee") + "&order=" + url.QueryEscape("$score,label"),
			[]string{"twice", "phrase", "both", "once"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := srv.Do(t, "GET", "/classes/Txt?"+tc.query, nil, servertest.Master())
			if res.Status != 200 {
				t.Fatalf("%d %s", res.Status, res.Body)
			}
			results, _ := res.Map()["results"].([]any)
			var got []string
			last := -1.0
			for i, r := range results {
				o := r.(map[string]any)
				got = append(got, o["label"].(string))
				score, ok := o["$score"].(float64)
				if tc.scored && !ok {
					t.Errorf("result %d has no $score: %v", i, o)
				}
				if ok && last >= 0 && score > last {
					t.Errorf("scores rise at %d: %v after %v", i, score, last)
				}
				if ok {
					last = score
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
	res := srv.Do(t, "GET", "/classes/Txt?order="+url.QueryEscape("$score,label")+"&limit=2", nil, servertest.Master())
	if res.Status != 200 {
		t.Fatalf("$score without $text: %d %s", res.Status, res.Body)
	}
}
