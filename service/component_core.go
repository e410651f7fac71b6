package service

// What the components beside the core (idempotency, webhooks, files,
// installations) ask of it beyond the object operations every front end
// uses. The core never imports them; the server wires them.

// WriteAsServer commits ops as one atomic, durable unit on the server's
// own behalf: master, allowed internal fields and classes, no denylist
// check. The batch size limit does not apply.
func (s *Service) WriteAsServer(ops []WriteOp) ([]WriteResult, error) {
	return s.write(InternalAuth(), ops, true)
}
