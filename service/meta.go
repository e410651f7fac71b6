package service

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/quarrydata/quarry/store"
)

// Server settings kept with the data (Meta): readers load an immutable
// view without a lock; SetMeta commits, then swaps in a new view. The
// GraphQL configuration is decoded once per change, not per request.

// metaView is one immutable state of the server settings.
type metaView struct {
	values  map[string][]byte
	graphQL *GraphQLSettings
}

// GraphQLSettings is the stored GraphQL configuration, decoded once per
// change and shared by every reader until the next: none may modify it.
type GraphQLSettings struct {
	// Config is the decoded configuration ({} when none is stored).
	Config map[string]any
	// Raw is its stored JSON (nil when none is stored); equal Raw, equal
	// Config.
	Raw []byte
	// Err is set when the stored JSON does not decode.
	Err error
}

var noGraphQLSettings = &GraphQLSettings{Config: map[string]any{}}

// Meta returns a server setting kept with the data. The bytes are
// shared: callers must not modify them.
func (s *Service) Meta(key string) ([]byte, bool) {
	v := s.meta.Load()
	if v == nil {
		return nil, false
	}
	b, ok := v.values[key]
	return b, ok
}

// SetMeta durably stores a server setting with the data. Settings are
// committed one at a time, so that they are published in their commit
// order; readers never wait for it.
func (s *Service) SetMeta(key string, value []byte) error {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	if err := s.store.Commit([]store.Record{{Kind: store.KindMeta, Key: key, Value: value}}); err != nil {
		return err
	}
	s.swapMetaLocked(key, value)
	return nil
}

// putMeta publishes a setting committed elsewhere (loaded, or another
// instance's); nil value deletes it.
func (s *Service) putMeta(key string, value []byte) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	s.swapMetaLocked(key, value)
}

// swapMetaLocked publishes a view with key set to value (deleted when
// nil); the caller holds metaMu.
func (s *Service) swapMetaLocked(key string, value []byte) {
	cur := s.meta.Load()
	next := &metaView{values: map[string][]byte{}, graphQL: noGraphQLSettings}
	if cur != nil {
		next.values = maps.Clone(cur.values)
		next.graphQL = cur.graphQL
	}
	if value == nil {
		delete(next.values, key)
	} else {
		next.values[key] = value
	}
	if key == graphQLConfigMeta {
		next.graphQL = decodeGraphQLSettings(value)
	}
	s.meta.Store(next)
}

func decodeGraphQLSettings(raw []byte) *GraphQLSettings {
	if raw == nil {
		return noGraphQLSettings
	}
	g := &GraphQLSettings{Config: map[string]any{}, Raw: raw}
	if err := json.Unmarshal(raw, &g.Config); err != nil {
		g.Config, g.Err = nil, fmt.Errorf("stored GraphQL config: %w", err)
	}
	return g
}

// GraphQLSettings returns the stored GraphQL configuration, shared and
// read-only; the same pointer until it changes.
func (s *Service) GraphQLSettings() *GraphQLSettings {
	if v := s.meta.Load(); v != nil {
		return v.graphQL
	}
	return noGraphQLSettings
}
