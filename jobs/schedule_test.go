package jobs_test

import (
	"testing"
	"time"

	"github.com/quarrydata/quarry/jobs"
)

func TestJobScheduleDue(t *testing.T) {
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC) // a Monday
	at := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, time.UTC) }
	cases := []struct {
		name  string
		js    jobs.JobSchedule
		now   time.Time
		due   time.Time
		isDue bool
	}{
		{"before start", jobs.JobSchedule{StartAfter: start, TimeOfDay: -1}, at(23, 7, 59), time.Time{}, false},
		{"once, at start", jobs.JobSchedule{StartAfter: start, TimeOfDay: -1}, at(23, 8, 0), start, true},
		{"once, ran", jobs.JobSchedule{StartAfter: start, TimeOfDay: -1, LastRun: start}, at(25, 0, 0), time.Time{}, false},
		{"repeat: latest step", jobs.JobSchedule{StartAfter: start, RepeatMinutes: 15, TimeOfDay: -1}, at(23, 8, 40), at(23, 8, 30), true},
		{"repeat: step done", jobs.JobSchedule{StartAfter: start, RepeatMinutes: 15, TimeOfDay: -1, LastRun: at(23, 8, 30)}, at(23, 8, 44), time.Time{}, false},
		{"repeat: next step", jobs.JobSchedule{StartAfter: start, RepeatMinutes: 15, TimeOfDay: -1, LastRun: at(23, 8, 30)}, at(23, 8, 45), at(23, 8, 45), true},
		{"daily: today's time passed", jobs.JobSchedule{StartAfter: start, TimeOfDay: 10 * time.Hour}, at(24, 11, 0), at(24, 10, 0), true},
		{"daily: before today's time is yesterday's", jobs.JobSchedule{StartAfter: start, TimeOfDay: 10 * time.Hour, LastRun: at(23, 10, 0)}, at(24, 9, 0), time.Time{}, false},
		{"daily: first day before its time", jobs.JobSchedule{StartAfter: start, TimeOfDay: 7 * time.Hour}, at(23, 9, 0), time.Time{}, false},
		{"days of week: not today", jobs.JobSchedule{StartAfter: start, TimeOfDay: 10 * time.Hour, DaysOfWeek: []int{0, 6}}, at(24, 11, 0), time.Time{}, false},
		{"days of week: Tuesday", jobs.JobSchedule{StartAfter: start, TimeOfDay: 10 * time.Hour, DaysOfWeek: []int{2}}, at(24, 11, 0), at(24, 10, 0), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			due, ok := c.js.Due(c.now)
			if ok != c.isDue || !due.Equal(c.due) {
				t.Fatalf("Due = %v, %v; want %v, %v", due, ok, c.due, c.isDue)
			}
		})
	}
}
