package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Options locate a bucket of an S3-compatible object store.
type S3Options struct {
	Bucket string
	// Prefix goes before every name (a "folder" such as "files/").
	Prefix string
	Region string
	// Endpoint is host[:port] of an S3-compatible service; empty means
	// AWS S3 (s3.amazonaws.com). A custom endpoint is addressed path-style.
	Endpoint string
	// Insecure talks plain HTTP to Endpoint (a local test server).
	Insecure bool
	// AccessKey and SecretKey are static credentials; when both are empty
	// the usual AWS environment variables and instance roles are tried.
	AccessKey, SecretKey string
	// DirectAccess makes file URLs point at the bucket itself (a public
	// bucket or a CDN in front of it) instead of at Quarry.
	DirectAccess bool
	// BaseURL, with DirectAccess, replaces the bucket's own address in
	// file URLs (a CDN): <BaseURL>/<prefix><name>.
	BaseURL string
	// PresignExpiry, with DirectAccess, makes file URLs presigned GET
	// URLs valid this long, for a private bucket.
	PresignExpiry time.Duration
}

// S3 keeps files as objects in one bucket: content type and metadata as
// the object's own headers, tags as object tags. Objects are written with
// one PUT of known size, so a failed upload leaves nothing behind.
type S3 struct {
	client *minio.Client
	bucket string
	prefix string
	direct S3Options // the direct-access options
	public string    // the bucket's own address, without a trailing slash
}

// NewS3 builds the adapter; it does not contact the service.
func NewS3(o S3Options) (*S3, error) {
	if o.Bucket == "" {
		return nil, errors.New("files: s3Bucket is required for the S3 files adapter")
	}
	endpoint, lookup := o.Endpoint, minio.BucketLookupPath
	if endpoint == "" {
		endpoint, lookup = "s3.amazonaws.com", minio.BucketLookupAuto
	}
	endpoint = strings.TrimPrefix(strings.TrimPrefix(endpoint, "https://"), "http://")
	var creds *credentials.Credentials
	if o.AccessKey != "" || o.SecretKey != "" {
		creds = credentials.NewStaticV4(o.AccessKey, o.SecretKey, "")
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}, &credentials.IAM{}})
	}
	client, err := minio.New(endpoint, &minio.Options{Creds: creds, Secure: !o.Insecure, Region: o.Region, BucketLookup: lookup})
	if err != nil {
		return nil, fmt.Errorf("files: s3: %w", err)
	}
	s := &S3{client: client, bucket: o.Bucket, prefix: o.Prefix, direct: o}
	scheme := "https://"
	if o.Insecure {
		scheme = "http://"
	}
	if lookup == minio.BucketLookupPath {
		s.public = scheme + endpoint + "/" + url.PathEscape(o.Bucket)
	} else {
		host := "s3.amazonaws.com"
		if o.Region != "" {
			host = "s3." + o.Region + ".amazonaws.com"
		}
		s.public = scheme + o.Bucket + "." + host
	}
	return s, nil
}

// DirectURL is the address clients fetch a file from when DirectAccess is
// on: a presigned GET URL, the BaseURL's, or the bucket's own. ok is false
// when direct access is off (Quarry serves the file).
func (s *S3) DirectURL(name string) (u string, ok bool, err error) {
	if !s.direct.DirectAccess {
		return "", false, nil
	}
	key := s.prefix + name
	if s.direct.PresignExpiry > 0 {
		signed, err := s.client.PresignedGetObject(context.Background(), s.bucket, key, s.direct.PresignExpiry, nil)
		if err != nil {
			return "", true, fmt.Errorf("files: s3 presign: %w", err)
		}
		return signed.String(), true, nil
	}
	base := s.public
	if s.direct.BaseURL != "" {
		base = strings.TrimRight(s.direct.BaseURL, "/")
	}
	return base + "/" + escapeKey(key), true, nil
}

// escapeKey escapes each segment of an object key, keeping its slashes.
func escapeKey(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// Create implements Adapter.
func (s *S3) Create(ctx context.Context, name string, r io.Reader, size int64, info Info) error {
	if err := ValidName(name); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+name, r, size, minio.PutObjectOptions{
		ContentType: info.ContentType, UserMetadata: info.Metadata, UserTags: info.Tags})
	if err != nil {
		return fmt.Errorf("files: s3 put: %w", err)
	}
	return nil
}

// Open implements Adapter. The returned reader fetches ranges on demand.
func (s *S3) Open(ctx context.Context, name string) (ReadSeekCloser, Info, error) {
	if ValidName(name) != nil {
		return nil, Info{}, ErrNotFound
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+name, minio.GetObjectOptions{})
	if err != nil {
		return nil, Info{}, s3Error(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, Info{}, s3Error(err)
	}
	info := Info{Name: name, ContentType: ContentType(name, st.ContentType), Size: st.Size}
	for k, v := range st.UserMetadata {
		if info.Metadata == nil {
			info.Metadata = map[string]string{}
		}
		info.Metadata[cutPrefixFold(k, "X-Amz-Meta-")] = v
	}
	return obj, info, nil
}

// Delete implements Adapter.
func (s *S3) Delete(ctx context.Context, name string) error {
	if ValidName(name) != nil {
		return ErrNotFound
	}
	if _, err := s.client.StatObject(ctx, s.bucket, s.prefix+name, minio.StatObjectOptions{}); err != nil {
		return s3Error(err)
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.prefix+name, minio.RemoveObjectOptions{}); err != nil {
		return s3Error(err)
	}
	return nil
}

func s3Error(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == minio.NoSuchKey || resp.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	return fmt.Errorf("files: s3: %w", err)
}

// cutPrefixFold removes prefix from s, ignoring case, when s has it.
func cutPrefixFold(s, prefix string) string {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):]
	}
	return s
}
