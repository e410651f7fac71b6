package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quarrydata/quarry/files"
)

func TestRotateKeyCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "app.db")
	plain, err := files.NewLocal(db+".files", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.txt", "b.txt"} {
		if err := plain.Create(context.Background(), n, strings.NewReader("text "+n), -1, files.Info{}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(key, name string) string {
		l, _ := files.NewLocal(db+".files", key)
		r, _, err := l.Open(context.Background(), name)
		if err != nil {
			return err.Error()
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		return string(b)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		checks map[string]string // name -> key that opens it
	}{
		{[]string{"rotate-key", "--databaseURI", db, "--encryptionKey", "k1"}, 0, map[string]string{"a.txt": "k1", "b.txt": "k1"}},
		{[]string{"rotate-key", "--oldKey=k1", "--names", "b.txt", "--databaseURI", db, "--encryptionKey", "k2"}, 0,
			map[string]string{"a.txt": "k1", "b.txt": "k2"}},
		{[]string{"rotate-key", "--oldKey", "wrong", "--databaseURI", db}, 1, map[string]string{"a.txt": "k1"}},
		{[]string{"rotate-key", "--oldKey"}, 2, nil},
		{[]string{"nothing"}, 2, nil},
	} {
		var out, errOut bytes.Buffer
		if code := runFiles(tc.args, nil, &out, &errOut); code != tc.code {
			t.Errorf("%v: exit %d, want %d; %s%s", tc.args, code, tc.code, out.String(), errOut.String())
		}
		for name, key := range tc.checks {
			if got := read(key, name); got != "text "+name {
				t.Errorf("%v: %s with key %q reads %q", tc.args, name, key, got)
			}
		}
	}
}
