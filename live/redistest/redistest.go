// Package redistest gives tests the local Redis (127.0.0.1:6379): when it
// does not answer the test is skipped with a loud message, or fails when
// CI=true (.ci/run starts Redis). Only tests import it.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// URL is the local Redis the tests share; each test keeps to keys and
// channels of its own.
const URL = "redis://127.0.0.1:6379/0"

// Require skips t (or fails it in CI) when Redis is not running; need says
// which tests need it.
func Require(t testing.TB, need string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", "127.0.0.1:6379", time.Second)
	if err == nil {
		conn.Close()
		return
	}
	msg := fmt.Sprintf("!!! Redis is not running on 127.0.0.1:6379 (%v): %s need it; "+
		"start it with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save \"\" --appendonly no", err, need)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// DropKeys deletes the keys under prefix a test left in the shared Redis
// (some, such as generation counters, have no expiry).
func DropKeys(t testing.TB, prefix string) {
	t.Helper()
	opts, err := redis.ParseURL(URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err == nil && len(keys) > 0 {
		err = rdb.Del(ctx, keys...).Err()
	}
	if err != nil {
		t.Errorf("dropping the test's Redis keys under %q: %v", prefix, err)
	}
}
