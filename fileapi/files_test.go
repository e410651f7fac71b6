package fileapi_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/quarrydata/quarry/fileapi"
	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/schema"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// openService opens a service on a new on-disk buntdb store, closed when
// the test ends.
func openService(t *testing.T, opts service.Options) *service.Service {
	t.Helper()
	a, err := store.Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	s, err := service.Open(a, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.CloseChanges(0) }) // before the store closes
	return s
}

// TestSaveFileCallers: fileUpload's three kinds of caller, the master key's
// exemption and the extension rule, decided by the files API.
func TestSaveFileCallers(t *testing.T) {
	local, err := files.NewLocal(t.TempDir(), "")
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := files.ExtensionRule(nil)
	svc := openService(t, service.Options{Files: service.FilesOptions{Adapter: local, EnableForAuthenticatedUser: true,
		AllowExtension: allow, MaxSize: 8, URL: func(n string) string { return "http://x/files/app/" + n }}})
	s := fileapi.New(svc)
	master := service.Auth{Master: true}
	mkUser := func(body map[string]any) service.Auth {
		res, err := svc.Create(master, "_User", body)
		if err != nil {
			t.Fatal(err)
		}
		return service.Auth{UserID: res.ObjectID}
	}
	user := mkUser(map[string]any{"username": "ann", "password": "pw"})
	anon := mkUser(map[string]any{"authData": map[string]any{"anonymous": map[string]any{"id": "a1"}}})
	for _, tc := range []struct {
		name string
		auth service.Auth
		file string
		data string
		code int // 0: saved
	}{
		{"master", master, "a.html", "x", 0},
		{"user", user, "a.txt", "x", 0},
		{"user, active content", user, "a.svg", "x", schema.CodeFileSaveError},
		{"anonymous user", anon, "a.txt", "x", schema.CodeFileSaveError},
		{"public", service.Auth{}, "a.txt", "x", schema.CodeFileSaveError},
		{"too large", master, "a.txt", "123456789", schema.CodeFileTooLarge},
		{"empty", master, "a.txt", "", schema.CodeFileSaveError},
		{"bad name", master, "a/b", "x", schema.CodeInvalidFileName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved, err := s.SaveFile(tc.auth, fileapi.FileUpload{Name: tc.file, Data: []byte(tc.data)})
			var pe *schema.Error
			switch {
			case tc.code == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.code == 0 && saved.URL != "http://x/files/app/"+saved.Name:
				t.Errorf("saved %+v", saved)
			case tc.code != 0 && (!errors.As(err, &pe) || pe.Code != tc.code):
				t.Errorf("error %v, want code %d", err, tc.code)
			}
		})
	}
	_, err = s.SaveFile(anon, fileapi.FileUpload{Name: "a.txt", Data: []byte("x")})
	if err == nil || err.Error() != "parse error 130: File upload by anonymous user is disabled." {
		t.Errorf("anonymous: %v", err)
	}
}
