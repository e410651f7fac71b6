package server

import (
	"context"
	"sync"
	"time"

	"github.com/quarrydata/quarry/service"
)

// startJobScheduler starts the scheduled jobs (_JobSchedule) as they come
// due, every service.JobScheduleTick, until ctx ends; wait waits for it.
func startJobScheduler(ctx context.Context, svc *service.Service, now func() time.Time) (wait func()) {
	if now == nil {
		now = time.Now
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(service.JobScheduleTick)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				svc.RunDueJobs(now())
			}
		}
	}()
	return wg.Wait
}
