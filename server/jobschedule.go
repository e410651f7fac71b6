package server

import (
	"context"
	"sync"
	"time"

	"github.com/quarrydata/quarry/jobs"
	"github.com/quarrydata/quarry/service"
)

// startJobScheduler starts the scheduled jobs (_JobSchedule) as they come
// due, every jobs.JobScheduleTick, until ctx ends; wait waits for it.
func startJobScheduler(ctx context.Context, svc *service.Service, claims jobs.Claims, now func() time.Time) (wait func()) {
	if now == nil {
		now = time.Now
	}
	schedules := jobs.New(svc, claims)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(jobs.JobScheduleTick)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				schedules.RunDueJobs(now())
			}
		}
	}()
	return wg.Wait
}
