package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/service"
	"github.com/quarrydata/quarry/store"
)

// fileStore is the files API's wiring: its public base address, known
// once the server listens when no serverURL is configured, and the
// temporary directory of a server whose database is in memory.
type fileStore struct {
	base   atomic.Pointer[string]
	appID  string
	tmp    string    // removed by close
	direct *files.S3 // the S3 adapter, for s3DirectAccess
	// closeAdapter releases the adapter's connections (PostgreSQL).
	closeAdapter func()
	log          *slog.Logger
}

// url is a stored file's public address: <base>/files/<appId>/<name>, or
// the bucket's own address with s3DirectAccess.
func (f *fileStore) url(name string) string {
	if f.direct != nil {
		u, ok, err := f.direct.DirectURL(name)
		if err == nil && ok {
			return u
		}
		if err != nil {
			// Quarry can still serve the file itself.
			f.log.Warn("files: no direct URL, serving through Quarry", "file", name, "error", err)
		}
	}
	base := ""
	if p := f.base.Load(); p != nil {
		base = *p
	}
	return base + "/files/" + url.PathEscape(f.appID) + "/" + url.PathEscape(name)
}

// listening sets the base address from the listen address when neither
// publicServerURL nor serverURL gave one.
func (f *fileStore) listening(opts *config.Options, hostPort string) {
	if f != nil && f.base.Load() == nil {
		base := "http://" + hostPort + strings.TrimRight(opts.MountPath, "/")
		f.base.Store(&base)
	}
}

func (f *fileStore) close() {
	if f == nil {
		return
	}
	if f.tmp != "" {
		os.RemoveAll(f.tmp)
	}
	if f.closeAdapter != nil {
		f.closeAdapter()
	}
}

// openFiles builds the files adapter and the upload rules from options.
func openFiles(opts *config.Options, log *slog.Logger) (service.FilesOptions, *fileStore, error) {
	fo := opts.Files
	fs := &fileStore{appID: opts.AppID, log: log}
	for _, u := range []string{opts.PublicServerURL, opts.ServerURL} {
		if u != "" {
			base := strings.TrimRight(u, "/")
			fs.base.Store(&base)
			break
		}
	}
	allow, err := files.ExtensionRule(fo.FileUpload.FileExtensions)
	if err != nil {
		return service.FilesOptions{}, nil, err
	}
	var adapter files.Adapter
	kind := fo.Adapter
	if kind == config.FilesAdapterLocal && fo.Directory == "" && isPostgresURI(opts.DatabaseURI) {
		// A shared database keeps the files too: every instance serves
		// them, and nothing lives in a temporary directory.
		kind = config.FilesAdapterPostgres
		log.Info("files: kept as large objects in the PostgreSQL database (set filesSubDirectory or filesAdapter for another place)")
	}
	switch kind {
	case config.FilesAdapterS3:
		endpoint, insecure := strings.CutPrefix(fo.S3.Endpoint, "http://")
		so := files.S3Options{Bucket: fo.S3.Bucket, Prefix: fo.S3.Prefix, Region: fo.S3.Region,
			Endpoint: endpoint, Insecure: insecure, AccessKey: fo.S3.AccessKey, SecretKey: fo.S3.SecretKey,
			DirectAccess: fo.S3.DirectAccess, BaseURL: fo.S3.BaseURL}
		if fo.S3.PresignedURL {
			so.PresignExpiry = cmp.Or(fo.S3.PresignedURLExpires, 900*time.Second)
		}
		var s3 *files.S3
		if s3, err = files.NewS3(so); err == nil {
			adapter, fs.direct = s3, s3
		}
	case config.FilesAdapterPostgres:
		if !isPostgresURI(opts.DatabaseURI) {
			err = fmt.Errorf(`filesAdapter "postgres" keeps files in the PostgreSQL database of databaseURI, and %s is not one`, redactURI(opts.DatabaseURI))
			break
		}
		var pg *files.Postgres
		// Bounded like the store's own connection, so an unreachable
		// database fails the start instead of hanging it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		pg, err = files.NewPostgres(ctx, opts.DatabaseURI)
		cancel()
		if err == nil {
			adapter, fs.closeAdapter = pg, pg.Close
		}
	default:
		dir := fo.Directory
		if dir == "" {
			if dir, err = defaultFilesDir(opts.DatabaseURI, fs, log); err != nil {
				return service.FilesOptions{}, nil, err
			}
		}
		adapter, err = files.NewLocal(dir, fo.EncryptionKey)
	}
	if err != nil {
		fs.close()
		return service.FilesOptions{}, nil, err
	}
	return service.FilesOptions{
		Adapter:                    adapter,
		EnableForPublic:            fo.FileUpload.EnableForPublic,
		EnableForAnonymousUser:     fo.FileUpload.EnableForAnonymousUser,
		EnableForAuthenticatedUser: fo.FileUpload.EnableForAuthenticatedUser,
		AllowExtension:             allow,
		PreserveFileName:           fo.PreserveFileName,
		WideNames:                  opts.ParseServerDefaults(),
		MaxSize:                    opts.MaxUploadSize,
		URL:                        fs.url,
	}, fs, nil
}

// defaultFilesDir is "<database file>.files", or a temporary directory
// (removed at shutdown) for a database in memory or in PostgreSQL.
func defaultFilesDir(uri string, fs *fileStore, log *slog.Logger) (string, error) {
	if path, ok := store.FilePath(uri); ok {
		return path + ".files", nil
	}
	tmp, err := os.MkdirTemp("", "quarry-files-")
	if err != nil {
		return "", fmt.Errorf("files: %w", err)
	}
	fs.tmp = tmp
	where := "the database is in memory"
	if isPostgresURI(uri) {
		where = "the database is in PostgreSQL, which keeps no file bytes"
	}
	log.Warn("files: "+where+", so uploaded files go to a temporary directory removed at shutdown; set filesSubDirectory or filesAdapter (s3 when several instances serve files)",
		"directory", tmp)
	return tmp, nil
}

func isPostgresURI(uri string) bool {
	return strings.HasPrefix(uri, "postgres://") || strings.HasPrefix(uri, "postgresql://")
}

// OpenFilesAdapter is the files adapter a server started with opts would
// use, for commands that fill it while no server runs (quarry import);
// release it with close.
func OpenFilesAdapter(opts *config.Options, log *slog.Logger) (adapter files.Adapter, close func(), err error) {
	fo, fs, err := openFiles(opts, log)
	if err != nil {
		return nil, nil, err
	}
	return fo.Adapter, fs.close, nil
}
