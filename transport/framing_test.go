package transport_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/server/servertest"
)

// rawExchange sends raw bytes on a new TCP connection to the server and
// reads one reply.
func rawExchange(t *testing.T, srv *servertest.Server, request string) (int, string, bool) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Close
}

// TestFramingAndDotSegmentsOverTCP: requests a proxy in front could read
// differently from the server (both Content-Length and Transfer-Encoding,
// bare-LF line endings) and paths with dot segments, plain or
// percent-encoded, are refused with 400 and the connection closed; the
// normalised path is never served or echoed.
func TestFramingAndDotSegmentsOverTCP(t *testing.T) {
	srv := servertest.Start(t, nil)
	u, _ := url.Parse(srv.URL)
	mount := u.Path
	name := upload(t, srv, "secret.txt", "text/plain", "file body")
	app := "X-Parse-Application-Id: " + servertest.AppID + "\r\n"
	get := func(target string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + app + "\r\n"
	}
	for _, tc := range []struct {
		name, request string
		status        int
		notInBody     string
	}{
		{"content-length then chunked", "POST " + mount + "/classes/Post HTTP/1.1\r\nHost: 127.0.0.1\r\n" + app +
			"Content-Type: application/json\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, ""},
		{"chunked then content-length", "POST " + mount + "/classes/Post HTTP/1.1\r\nHost: 127.0.0.1\r\n" + app +
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\ncontent-length: 40\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400, ""},
		{"bare LF in one header line", "GET " + mount + "/classes/Post HTTP/1.1\r\nHost: 127.0.0.1\nX-Other: 1\r\n" + app + "\r\n", 400, ""},
		{"bare LF everywhere", "GET " + mount + "/classes/Post HTTP/1.1\nHost: 127.0.0.1\n" + strings.TrimSuffix(app, "\r\n") + "\n\n", 400, ""},
		{"bare LF ending only the request line", "GET " + mount + "/classes/Post HTTP/1.1\nHost: 127.0.0.1\r\n" + app + "\r\n", 400, ""},
		{"bare LF ending the head", "GET " + mount + "/classes/Post HTTP/1.1\r\nHost: 127.0.0.1\r\n" + app + "\n", 400, ""},
		{"dot-dot segment to a file", get(mount + "/files/" + servertest.AppID + "/x/../" + name), 400, "file body"},
		{"dot segment to a file", get(mount + "/files/" + servertest.AppID + "/./" + name), 400, "file body"},
		{"encoded dot-dot", get(mount + "/files/" + servertest.AppID + "/x/%2e%2e/" + name), 400, "file body"},
		{"mixed-case encoded dot-dot", get(mount + "/files/" + servertest.AppID + "/x/.%2E/" + name), 400, "file body"},
		{"encoded slash and dot-dot", get(mount + "/files/" + servertest.AppID + "/x%2f..%2f" + name), 400, "file body"},
		{"traversal to /etc/passwd", get(mount + "/files/" + servertest.AppID + "/../../../../etc/passwd"), 400, "/etc/passwd"},
		{"traversal out of the mount", get(mount + "/../etc/passwd"), 400, "/etc/passwd"},
		{"a file name with dots is fine", get(mount + "/files/" + servertest.AppID + "/" + name), 200, ""},
		{"dots in the query are fine", get(mount + "/classes/Post?where=%7B%22a%22%3A%22../..%22%7D"), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, closed := rawExchange(t, srv, tc.request)
			if status != tc.status {
				t.Errorf("status %d, want %d: %s", status, tc.status, body)
			}
			if tc.status == 400 && !closed {
				t.Errorf("the connection stays open after a refused request")
			}
			if tc.notInBody != "" && strings.Contains(body, tc.notInBody) {
				t.Errorf("the reply holds %q: %s", tc.notInBody, body)
			}
		})
	}
}

// TestBareLFRequestLineAfterBodies: on one kept-alive connection, bodies
// holding bare LFs (a Content-Length body, a chunked one) are not taken
// for request lines, and the request whose own line ends in a bare LF is
// the one refused.
func TestBareLFRequestLineAfterBodies(t *testing.T) {
	srv := servertest.Start(t, nil)
	u, _ := url.Parse(srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	head := func(method, lineEnd string) string {
		return method + " " + u.Path + "/classes/Post HTTP/1.1" + lineEnd + "Host: 127.0.0.1\r\nX-Parse-Application-Id: " +
			servertest.AppID + "\r\nContent-Type: application/json\r\n"
	}
	body := "{\n\"text\": \"GET / HTTP/1.1\"\n}"
	steps := []struct {
		name, request string
		status        int
	}{
		{"a body with bare LFs", head("POST", "\r\n") + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body, 201},
		{"a chunked body with bare LFs", head("POST", "\r\n") + "Transfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n", 201},
		{"a well-framed get", head("GET", "\r\n") + "\r\n", 200},
		{"a request line ending in a bare LF", head("GET", "\n") + "\r\n", 400},
	}
	for _, step := range steps {
		if _, err := io.WriteString(conn, step.request); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		io.Copy(io.Discard, res.Body)
		if res.StatusCode != step.status {
			t.Fatalf("%s: status %d, want %d", step.name, res.StatusCode, step.status)
		}
	}
}

// TestFramingKeepAlive: well-framed requests still share one connection.
func TestFramingKeepAlive(t *testing.T) {
	srv := servertest.Start(t, nil)
	u, _ := url.Parse(srv.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := range 3 {
		req := "GET " + u.Path + "/classes/Post HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Parse-Application-Id: " + servertest.AppID + "\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, res.Body)
		if res.StatusCode != 200 || res.Close {
			t.Fatalf("request %d: %d, close %v", i, res.StatusCode, res.Close)
		}
	}
}
