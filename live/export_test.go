package live

// SetRetryWait replaces the wait between a publisher's attempts to reach
// Redis, so tests decide when a retry happens.
func SetRetryWait(r *Redis, wait func(attempt int) bool) { r.retryWait = wait }

// SetReadRetryWait replaces the wait of a subscriber's stream reads after
// a failure, so tests decide when it reads again.
func SetReadRetryWait(r *Redis, wait func(attempt int) bool) { r.readRetryWait = wait }

// JoinChange applies one change to the live joins at once, on the
// caller's goroutine, for benchmarks of the cost of one inner change.
func JoinChange(s *Server, c Change) {
	s.joins.mu.Lock()
	defer s.joins.mu.Unlock()
	s.joinChange(c)
}

// SetSendQueue sets the send queue of clients that connect from now on
// (benchmarks whose events outrun a reader).
func SetSendQueue(s *Server, n int) { s.opts.SendQueue = n }

// IgnoreRelationEdits makes the live joins ignore the relation rows a
// change carries, as for a change that comes without them (through Redis,
// to a standalone server); call it before any subscription.
func IgnoreRelationEdits(s *Server) { s.joins.ignoreRelationEdits = true }
