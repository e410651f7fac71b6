package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestFilesOptions(t *testing.T) {
	for _, c := range []struct {
		loadCase
		want FilesOptions
		err  string // substring of the error, "" for none
	}{
		{loadCase: loadCase{name: "defaults"},
			want: FilesOptions{Adapter: "local", FileUpload: FileUploadOptions{EnableForAuthenticatedUser: true}}},
		{loadCase: loadCase{name: "file", args: []string{"$FILE"}, file: `{"encryptionKey": "k", "preserveFileName": true,
			"filesSubDirectory": "/srv/files", "fileUpload": {"enableForPublic": true, "enableForAuthenticatedUser": false,
			"fileExtensions": ["jpe?g", "png"]}}`},
			want: FilesOptions{Adapter: "local", Directory: "/srv/files", EncryptionKey: "k", PreserveFileName: true,
				FileUpload: FileUploadOptions{EnableForPublic: true, FileExtensions: []string{"jpe?g", "png"}}}},
		{loadCase: loadCase{name: "s3 from flags and env", args: []string{"--filesAdapter", "s3", "--s3Bucket", "b", "--s3Prefix", "p/"},
			env: []string{"AWS_REGION=eu-west-1", "AWS_ACCESS_KEY_ID=ak", "QUARRY_S3_SECRET_KEY=sk", "QUARRY_S3_ENDPOINT=http://127.0.0.1:9000"}},
			want: FilesOptions{Adapter: "s3", FileUpload: FileUploadOptions{EnableForAuthenticatedUser: true},
				S3: S3Options{Bucket: "b", Prefix: "p/", Region: "eu-west-1", Endpoint: "http://127.0.0.1:9000", AccessKey: "ak", SecretKey: "sk"}}},
		{loadCase: loadCase{name: "Parse adapter module", args: []string{"$FILE"}, file: `{"filesAdapter": {"module": "x"}}`},
			want: FilesOptions{Adapter: "local", FileUpload: FileUploadOptions{EnableForAuthenticatedUser: true}}},
		{loadCase: loadCase{name: "s3 without bucket", args: []string{"--filesAdapter", "s3"}}, err: "s3Bucket"},
		{loadCase: loadCase{name: "s3 with encryptionKey", args: []string{"--filesAdapter", "s3", "--s3Bucket", "b", "--encryptionKey", "k"}},
			err: "local files adapter only"},
		{loadCase: loadCase{name: "unknown adapter", args: []string{"--filesAdapter", "gridfs"}}, err: `want "local", "s3" or "postgres"`},
		{loadCase: loadCase{name: "look-ahead", args: []string{"$FILE"}, file: `{"fileUpload": {"fileExtensions": ["^(?!html$)"]}}`},
			err: "no look-ahead"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, _, err := c.load(t)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.Files, c.want) {
				t.Errorf("Files = %+v, want %+v", o.Files, c.want)
			}
		})
	}
}
