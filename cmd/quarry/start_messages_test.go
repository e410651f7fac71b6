package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runEnv names the variable that makes this test binary run the command
// itself (its arguments as a JSON list), so the tests see its real output.
const runEnv = "QUARRY_TEST_RUN_ARGS"

func TestMain(m *testing.M) {
	if raw, ok := os.LookupEnv(runEnv); ok {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			panic(err)
		}
		os.Exit(run(args))
	}
	os.Exit(m.Run())
}

// command is the quarry command with args, run by this test binary.
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runEnv+"="+string(raw))
	return cmd
}

// startLines starts quarry with args, waits for its banner and stops it;
// it returns what it wrote to stderr (its log) and stdout.
func startLines(t *testing.T, args ...string) (stderr []string, stdout string) {
	t.Helper()
	cmd := command(t, args...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errLines := make(chan []string)
	go func() {
		var lines []string
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		errLines <- lines
	}()
	var out strings.Builder
	sc := bufio.NewScanner(outPipe)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "  health:") {
			break // the banner's address lines are out
		}
	}
	// The lines after health (liveQuery, graphQL) were written with it.
	go func() {
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
		}
	}()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("quarry did not stop on SIGTERM")
	}
	return <-errLines, out.String()
}

// indexOf is the index of the first line containing s, or -1.
func indexOf(lines []string, s string) int {
	for i, l := range lines {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

// TestStartMessages: the first log line comes before the store opens; the
// load is announced and its end reported before the banner; the banner
// names the GraphQL address when it is mounted, with no claim that it is
// not served.
func TestStartMessages(t *testing.T) {
	db := filepath.Join(t.TempDir(), "q.db")
	stderr, stdout := startLines(t, "--databaseURI", db, "--port", "0", "--host", "127.0.0.1",
		"--appId", "app", "--masterKey", "m", "--mountGraphQL")
	order := []string{"quarry starting", "opening the database", "database loaded and indexed"}
	prev := -1
	for _, msg := range order {
		i := indexOf(stderr, msg)
		if i < 0 {
			t.Fatalf("log lacks %q:\n%s", msg, strings.Join(stderr, "\n"))
		}
		if i <= prev {
			t.Errorf("%q comes before the line expected ahead of it:\n%s", msg, strings.Join(stderr, "\n"))
		}
		prev = i
	}
	if i := indexOf(stderr, "quarry starting"); i != 0 {
		t.Errorf("the first log line is %q, want the starting line", stderr[0])
	}
	if indexOf(stderr, "no effect yet") >= 0 || indexOf(stderr, "not served") >= 0 {
		t.Errorf("a served option is said to have no effect:\n%s", strings.Join(stderr, "\n"))
	}
	if !strings.Contains(stdout, "graphQL:    http://127.0.0.1:") {
		t.Errorf("banner lacks the GraphQL address:\n%s", stdout)
	}
}

// TestMongoURIRefused: a Parse Server databaseURI for MongoDB is refused at
// once, pointing to quarry import and postgres://, and nothing claims the
// database is in memory.
func TestMongoURIRefused(t *testing.T) {
	out, err := command(t, "--databaseURI", "mongodb://u:pw@127.0.0.1:27017/app", "--port", "0", "--appId", "app", "--masterKey", "m").CombinedOutput()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2; output:\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"quarry import", "postgres://"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "in memory") {
		t.Errorf("output claims the database is in memory:\n%s", text)
	}
}
