package server

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/quarrydata/quarry/cloud"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/ratelimit"
)

// openRateLimit builds the limiter of the rateLimit option and of the
// cloud validators' rateLimit; nil when there is no rule.
func openRateLimit(opts *config.Options, reg *cloud.Registry, log *slog.Logger) (*ratelimit.Limiter, error) {
	rules := make([]ratelimit.Rule, 0, len(opts.RateLimit))
	for _, r := range opts.RateLimit {
		rules = append(rules, ratelimit.Rule{
			Path: r.RequestPath, Methods: r.RequestMethods,
			Window: time.Duration(r.RequestTimeWindow) * time.Millisecond, Count: r.RequestCount,
			Message: r.ErrorResponseMessage, IncludeInternal: r.IncludeInternalRequests,
			IncludeMaster: r.IncludeMasterKey, RedisURL: r.RedisURL,
		})
	}
	rules = append(rules, reg.RateLimits()...)
	if len(rules) == 0 {
		return nil, nil
	}
	l, err := ratelimit.New(rules, ratelimit.Options{Prefix: "quarry:" + opts.AppID + ":ratelimit:", Now: opts.Now, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("rateLimit: %w", err)
	}
	return l, nil
}
