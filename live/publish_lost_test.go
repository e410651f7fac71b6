package live_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/quarrydata/quarry/live"
)

// lossFeed records what a Publisher tells its feed.
type lossFeed struct{ told []string }

func (f *lossFeed) Publish(c live.Change) { f.told = append(f.told, "publish "+c.Class) }
func (f *lossFeed) ForgetSessions(user string) {
	f.told = append(f.told, fmt.Sprintf("forget %q", user))
}
func (f *lossFeed) ChangesLost(classes []string) {
	f.told = append(f.told, fmt.Sprint("lost ", classes))
}

// TestPublisherLost: changes a publisher lost (its ring overflowed) make
// the feed tell the clients of the classes it publishes, and a lost
// session or role write makes every session lookup go.
func TestPublisherLost(t *testing.T) {
	cases := []struct {
		lost []string
		want []string
	}{
		{[]string{"Message"}, []string{"lost [Message]"}},
		{[]string{"Message", "Other"}, []string{"lost [Message]"}},
		{[]string{"Other"}, nil},
		{[]string{"_Session"}, []string{`forget ""`}},
		{[]string{"Message", "_Role"}, []string{`forget ""`, "lost [Message]"}},
	}
	for _, c := range cases {
		f := &lossFeed{}
		live.NewPublisher(nil, []string{"Message"}, f).Lost(c.lost, len(c.lost))
		if !slices.Equal(f.told, c.want) {
			t.Errorf("lost %v: the feed was told %q, want %q", c.lost, f.told, c.want)
		}
	}
}
