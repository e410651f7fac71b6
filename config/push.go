package config

import "fmt"

// Values of push.adapter.
const (
	PushAdapterNone = ""
	PushAdapterLog  = "log"
)

// PushOptions is the push object: which adapter POST /push delivers
// through. Without one, POST /push answers 115.
type PushOptions struct {
	// Adapter is push.adapter: PushAdapterLog, or none.
	Adapter string
}

// checkPush validates the push options.
func checkPush(p *PushOptions, check func(string, error)) {
	switch p.Adapter {
	case PushAdapterNone, PushAdapterLog:
	default:
		check("push.adapter", fmt.Errorf("want %q, got %q", PushAdapterLog, p.Adapter))
	}
}
