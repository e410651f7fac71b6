package live

// SetRetryWait replaces the wait between a publisher's attempts to reach
// Redis, so tests decide when a retry happens.
func SetRetryWait(r *Redis, wait func(attempt int) bool) { r.retryWait = wait }

// SetReadRetryWait replaces the wait of a subscriber's stream reads after
// a failure, so tests decide when it reads again.
func SetReadRetryWait(r *Redis, wait func(attempt int) bool) { r.readRetryWait = wait }
