package config

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Values of filesAdapter.
const (
	FilesAdapterLocal = "local"
	FilesAdapterS3    = "s3"
	// FilesAdapterPostgres keeps files as large objects in the PostgreSQL
	// database of databaseURI.
	FilesAdapterPostgres = "postgres"
)

// FilesOptions are the file storage options.
type FilesOptions struct {
	// Adapter is filesAdapter: FilesAdapterLocal (default), FilesAdapterS3
	// or FilesAdapterPostgres.
	Adapter string
	// Directory is filesSubDirectory: the local adapter's directory;
	// empty means "<database file>.files".
	Directory string
	// EncryptionKey is encryptionKey: local files are sealed with
	// AES-256-GCM under a key derived from it.
	EncryptionKey string
	// PreserveFileName is preserveFileName: no random prefix on names.
	PreserveFileName bool
	// FileUpload is fileUpload.
	FileUpload FileUploadOptions
	// S3 are the s3* options of the S3 adapter.
	S3 S3Options
}

// FileUploadOptions is the fileUpload object: who may upload without the
// master key. Parse's defaults: authenticated users only.
type FileUploadOptions struct {
	EnableForPublic            bool
	EnableForAnonymousUser     bool
	EnableForAuthenticatedUser bool
	// FileExtensions are allowed extensions (regular expressions, or
	// "*"); empty allows all but active content.
	FileExtensions []string
}

// S3Options locate the bucket of the S3 files adapter.
type S3Options struct {
	Bucket, Prefix, Region, Endpoint, AccessKey, SecretKey string
	// DirectAccess is s3DirectAccess: file URLs point at the bucket.
	DirectAccess bool
	// BaseURL is s3BaseUrl: with DirectAccess, the address in front of
	// the bucket (a CDN).
	BaseURL string
	// PresignedURL is s3PresignedUrl: with DirectAccess, file URLs are
	// presigned GET URLs valid PresignedURLExpires (s3PresignedUrlExpires).
	PresignedURL        bool
	PresignedURLExpires time.Duration
}

// checkFiles validates the file storage options.
func checkFiles(f *FilesOptions, check func(string, error)) {
	switch f.Adapter {
	case FilesAdapterLocal:
	case FilesAdapterPostgres:
		if f.EncryptionKey != "" {
			check("encryptionKey", errors.New(`applies to the local files adapter only`))
		}
	case FilesAdapterS3:
		if f.S3.Bucket == "" {
			check("s3Bucket", errors.New(`is required with filesAdapter "s3"`))
		}
		if (f.S3.BaseURL != "" || f.S3.PresignedURL) && !f.S3.DirectAccess {
			check("s3DirectAccess", errors.New("must be true for s3BaseUrl or s3PresignedUrl to apply"))
		}
		if f.EncryptionKey != "" {
			check("encryptionKey", errors.New(`applies to the local files adapter only; use the bucket's own encryption with "s3"`))
		}
	default:
		check("filesAdapter", fmt.Errorf("want %q, %q or %q, got %q", FilesAdapterLocal, FilesAdapterS3, FilesAdapterPostgres, f.Adapter))
	}
	for _, p := range f.FileUpload.FileExtensions {
		if p == "*" {
			continue
		}
		if _, err := regexp.Compile("^(?:" + p + ")$"); err != nil {
			hint := ""
			if strings.Contains(p, "(?!") {
				hint = " (Go regular expressions have no look-ahead: list the allowed extensions instead)"
			}
			check("fileUpload.fileExtensions", fmt.Errorf("%q is not a regular expression%s", p, hint))
		}
	}
}
