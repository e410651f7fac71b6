package bench

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/quarrydata/quarry/bench/cputime"
	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server/servertest"
	"github.com/quarrydata/quarry/service"
)

// Shape of the reply-path data: replyObjects items, replyPerCategory of
// them in each category (a query on one category returns that many).
const (
	replyObjects     = 10_000
	replyPerCategory = 50
)

// Benchmark_Reply_Get_Server: GET /classes/Item/{id} of one of 10,000
// objects, handed to the REST handler in-process with no socket and no
// client, so B/op and allocs/op are the server's own: envelope,
// authentication, routing, the read and the encoding of the reply.
func Benchmark_Reply_Get_Server(b *testing.B) {
	h, ids := replyFixture(b)
	reqs := make([]*fasthttp.Request, 64)
	for i := range reqs {
		reqs[i] = replyRequest("/parse/classes/Item/" + ids[(i*997)%len(ids)])
	}
	runReply(b, h, reqs, `"objectId"`)
}

// Benchmark_Reply_GetMaster_Server is Benchmark_Reply_Get_Server with the
// master key, as the load suite's get workload sends it.
func Benchmark_Reply_GetMaster_Server(b *testing.B) {
	h, ids := replyFixture(b)
	reqs := make([]*fasthttp.Request, 64)
	for i := range reqs {
		reqs[i] = replyRequest("/parse/classes/Item/" + ids[(i*997)%len(ids)])
		reqs[i].Header.Set("X-Parse-Master-Key", servertest.MasterKey)
	}
	runReply(b, h, reqs, `"objectId"`)
}

// Benchmark_Reply_Query50_Server: GET /classes/Item?where={"category":c},
// an indexed equality returning 50 objects, through the REST handler as
// Benchmark_Reply_Get_Server does.
func Benchmark_Reply_Query50_Server(b *testing.B) {
	h, _ := replyFixture(b)
	reqs := make([]*fasthttp.Request, 64)
	for i := range reqs {
		where := fmt.Sprintf(`{"category":"c%d"}`, (i*7)%(replyObjects/replyPerCategory))
		reqs[i] = replyRequest("/parse/classes/Item?where=" + url.QueryEscape(where))
	}
	runReply(b, h, reqs, `"results":[{`)
}

// Benchmark_Reply_Query50Keys_Server: Benchmark_Reply_Query50_Server with
// keys=n,category,score: each result a projection of its stored object.
func Benchmark_Reply_Query50Keys_Server(b *testing.B) {
	h, _ := replyFixture(b)
	reqs := make([]*fasthttp.Request, 64)
	for i := range reqs {
		where := fmt.Sprintf(`{"category":"c%d"}`, (i*7)%(replyObjects/replyPerCategory))
		reqs[i] = replyRequest("/parse/classes/Item?keys=n,category,score&where=" + url.QueryEscape(where))
	}
	runReply(b, h, reqs, `"results":[{`)
}

// Benchmark_Reply_Create_Server: POST /classes/Item {n, name, score}
// through the REST handler as Benchmark_Reply_Get_Server does. One request
// at a time, so each waits for its own fsync: ns/op is mostly the disk,
// B/op and allocs/op are the server's whole write path.
func Benchmark_Reply_Create_Server(b *testing.B) {
	h, _ := replyFixture(b)
	reqs := make([]*fasthttp.Request, 64)
	for i := range reqs {
		reqs[i] = replyWrite("POST", "/parse/classes/Item", fmt.Sprintf(`{"n":%d,"name":"player-%d","score":%d}`, i, i, i%1000))
	}
	runReplyStatus(b, h, reqs, fasthttp.StatusCreated, `"objectId"`)
}

// Benchmark_Reply_Update_Server: PUT {"score": Increment 1} on one of 100
// items (the load suite's update workload), as
// Benchmark_Reply_Create_Server does.
func Benchmark_Reply_Update_Server(b *testing.B) {
	h, ids := replyFixture(b)
	reqs := make([]*fasthttp.Request, 100)
	for i := range reqs {
		reqs[i] = replyWrite("PUT", "/parse/classes/Item/"+ids[i], `{"score":{"__op":"Increment","amount":1}}`)
	}
	runReplyStatus(b, h, reqs, fasthttp.StatusOK, `"score"`)
}

func replyWrite(method, uri, body string) *fasthttp.Request {
	req := replyRequest(uri)
	req.Header.SetMethod(method)
	req.Header.SetContentType("application/json")
	req.SetBodyString(body)
	return req
}

// replyFixture starts a server (on-disk buntdb, index on Item.category)
// and creates replyObjects items through the service, in transactions.
func replyFixture(b *testing.B) (fasthttp.RequestHandler, []string) {
	b.Helper()
	srv := servertest.Start(b, func(o *config.Options) { o.Indexes, o.BatchSize = []string{"Item.category"}, 500 })
	auth := service.Auth{Master: true}
	ids := make([]string, 0, replyObjects)
	const chunk = 500
	for first := 0; first < replyObjects; first += chunk {
		ops := make([]service.WriteOp, chunk)
		for i := range ops {
			n := first + i
			ops[i] = service.WriteOp{Method: service.MethodCreate, Class: "Item", Body: map[string]any{
				"n": float64(n), "category": "c" + strconv.Itoa(n%(replyObjects/replyPerCategory)),
				"score": float64(n % 1000), "tag": "t" + strconv.Itoa(n%37), "name": "item number " + strconv.Itoa(n),
			}}
		}
		res, err := srv.Service.WriteAll(auth, ops)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			ids = append(ids, r.Create.ObjectID)
		}
	}
	return srv.REST.Handler(), ids
}

func replyRequest(uri string) *fasthttp.Request {
	req := new(fasthttp.Request)
	req.Header.SetMethod("GET")
	req.SetRequestURI(uri)
	req.Header.SetHost("127.0.0.1")
	req.Header.Set("X-Parse-Application-Id", servertest.AppID)
	return req
}

// runReply serves reqs in turn through h, checking each reply.
func runReply(b *testing.B, h fasthttp.RequestHandler, reqs []*fasthttp.Request, want string) {
	runReplyStatus(b, h, reqs, fasthttp.StatusOK, want)
}

// runReplyStatus is runReply for replies with the given status.
func runReplyStatus(b *testing.B, h fasthttp.RequestHandler, reqs []*fasthttp.Request, status int, want string) {
	var ctx fasthttp.RequestCtx
	conn := &loopbackConn{addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}}
	serve := func(i int) {
		// As a server's connection does: the context and its buffers are
		// reused from one request to the next (Init would allocate).
		ctx.Init2(conn, nil, false)
		reqs[i%len(reqs)].CopyTo(&ctx.Request)
		h(&ctx)
		if ctx.Response.StatusCode() != status {
			b.Fatalf("status %d: %.300s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	for i := range reqs {
		serve(i)
		if body := string(ctx.Response.Body()); !strings.Contains(body, want) {
			b.Fatalf("reply %.300s lacks %s", body, want)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Used()
	for i := range b.N {
		serve(i)
	}
	reportCPU(b, cpu)
}

// loopbackConn is the connection a benchmark's requests come from: only
// its addresses are used.
type loopbackConn struct {
	net.Conn
	addr net.Addr
}

func (c *loopbackConn) RemoteAddr() net.Addr { return c.addr }
func (c loopbackConn) LocalAddr() net.Addr   { return c.addr }
