package live

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The stream. Pub/sub forgets a message no subscriber was connected for;
// a stream keeps its last RedisStreamMaxLen entries, so a LiveQuery server
// whose connection dropped reads on after the last entry it delivered.
// Each entry is
//
//	c  the channel suffix (afterSave, afterDelete, clearCache, quarryChangesLost)
//	m  the message, as on the channel
//	p  the publisher's id (random, per process)
//	s  the publisher's sequence number: 1, 2, 3…
//
// A publisher retrying a batch that Redis may have half taken adds some
// entries twice: a subscriber skips a sequence number it has already seen.
// A sequence number it skipped, or entries trimmed before it read them,
// are changes it lost: it tells its clients at once (LossNotifier).
const (
	// StreamSuffix names the stream: <prefix>quarryStream.
	StreamSuffix = "quarryStream"
	// RedisStreamMaxLen is the stream's default retention in entries
	// (about 100 MB of typical changes in Redis).
	RedisStreamMaxLen = 100_000
	// streamExactTrim: below it the retention is kept exactly; above,
	// approximately (whole nodes of the stream, much cheaper).
	streamExactTrim = 1000
)

func newPublisherID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Stream is the stream's key.
func (r *Redis) Stream() string { return r.prefix + StreamSuffix }

// number gives the messages of batch that have none their sequence
// numbers, once: a batch retried keeps them. Run by the publish loop.
func (r *Redis) number(batch []redisOut) {
	for i := range batch {
		if batch[i].seq == 0 {
			r.seq++
			batch[i].seq = r.seq
		}
	}
}

func (r *Redis) addToStream(ctx context.Context, pipe redis.Pipeliner, seq uint64, channel string, payload []byte) {
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: r.Stream(), MaxLen: r.streamMax, Approx: r.streamMax >= streamExactTrim,
		Values: []any{"c", channel, "m", payload, "p", r.publisher, "s", seq}})
}

// streamEnd is the id of the stream's newest entry ("0-0": none yet).
func (r *Redis) streamEnd(ctx context.Context, c *redis.Client) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	msgs, err := c.XRevRangeN(ctx, r.Stream(), "+", "-", 1).Result()
	if err != nil {
		return "", err
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// streamReader is one subscriber's place in the stream.
type streamReader struct {
	r    *Redis
	sink Feed
	last string            // the id of the last entry handed over
	seqs map[string]uint64 // publisher -> the last sequence number seen
}

// readLoop reads the stream after last until Close. A failed read is
// retried with a growing wait from where it stopped; the first failure
// and the recovery are logged once each.
func (r *Redis) readLoop(c *redis.Client, last string, sink Feed) {
	sr := &streamReader{r: r, sink: sink, last: last, seqs: map[string]uint64{}}
	ctx := context.Background()
	down, attempt := false, 0
	var downSince time.Time
	for !r.closing() {
		res, err := c.XRead(ctx, &redis.XReadArgs{Streams: []string{r.Stream(), sr.last}, Count: redisBatch, Block: redisReadBlock}).Result()
		if r.closing() {
			return
		}
		if errors.Is(err, redis.Nil) {
			err = nil // nothing new within redisReadBlock
		}
		if err != nil {
			if !down {
				down, downSince = true, time.Now()
				r.log.Error("livequery: redis stream unreachable; reading on after the last change delivered once it answers", "err", err)
			}
			if !r.readRetryWait(attempt) {
				return
			}
			attempt++
			continue
		}
		attempt = 0
		if down {
			down = false
			r.log.Warn("livequery: redis stream reachable again", "outage", time.Since(downSince).Round(time.Millisecond))
			sr.checkTrimmed(ctx, c)
		}
		for _, s := range res {
			for _, m := range s.Messages {
				sr.deliver(m)
			}
		}
	}
}

// deliver hands one entry to the sink, skipping one seen before and
// reporting a gap in its publisher's sequence.
func (sr *streamReader) deliver(m redis.XMessage) {
	sr.last = m.ID
	channel, _ := m.Values["c"].(string)
	payload, _ := m.Values["m"].(string)
	pub, _ := m.Values["p"].(string)
	seq, _ := strconv.ParseUint(str(m.Values["s"]), 10, 64)
	if pub != "" && seq > 0 {
		prev, known := sr.seqs[pub]
		if known && seq <= prev {
			return // a retried batch's entry, already delivered
		}
		sr.seqs[pub] = seq
		if known && seq > prev+1 {
			sr.lost("livequery: changes of another instance are missing from the redis stream (trimmed before they were read, or lost by a Redis restart); clients are asked to refetch",
				"publisher", pub, "missing", seq-prev-1)
		}
	}
	sr.r.receive(sr.r.prefix+channel, []byte(payload), sr.sink)
}

// checkTrimmed tells the clients when entries after the last one
// delivered were trimmed away while this reader could not read.
func (sr *streamReader) checkTrimmed(ctx context.Context, c *redis.Client) {
	info, err := c.XInfoStream(ctx, sr.r.Stream()).Result()
	if err != nil {
		return // no stream yet (a restarted Redis): the sequence numbers tell
	}
	if compareStreamIDs(info.MaxDeletedEntryID, sr.last) > 0 {
		sr.lost("livequery: the redis stream was trimmed past the last change delivered; clients are asked to refetch",
			"last", sr.last, "trimmedTo", info.MaxDeletedEntryID)
	}
}

func (sr *streamReader) lost(msg string, args ...any) {
	sr.r.log.Warn(msg, args...)
	if n, ok := sr.sink.(LossNotifier); ok {
		n.ChangesLost(nil)
	}
}

// readBackoff is the default readRetryWait: a doubling wait, cut short by
// Close.
func (r *Redis) readBackoff(attempt int) bool {
	return r.sleep(min(redisRetryMin<<min(attempt, 10), redisRetryMax))
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// compareStreamIDs orders two stream ids ("<ms>-<seq>").
func compareStreamIDs(a, b string) int {
	am, as := splitStreamID(a)
	bm, bs := splitStreamID(b)
	if am != bm {
		return cmp.Compare(am, bm)
	}
	return cmp.Compare(as, bs)
}

func splitStreamID(id string) (ms, seq uint64) {
	a, b, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(a, 10, 64)
	seq, _ = strconv.ParseUint(b, 10, 64)
	return ms, seq
}
