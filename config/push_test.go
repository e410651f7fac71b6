package config

import (
	"strings"
	"testing"
)

func TestPushOptions(t *testing.T) {
	cases := []struct {
		c       loadCase
		adapter string
		err     string // substring of the error; "" for none
	}{
		{loadCase{name: "default"}, "", ""},
		{loadCase{name: "file", args: []string{"$FILE"}, file: `{"push": {"adapter": "log"}}`}, "log", ""},
		{loadCase{name: "flag", args: []string{"--push", `{"adapter":"log"}`}}, "log", ""},
		{loadCase{name: "env", env: []string{"QUARRY_PUSH_ADAPTER=log"}}, "log", ""},
		{loadCase{name: "fcm", args: []string{"$FILE"}, file: `{"push": {"adapter": "fcm", "fcm": {"projectId": "p", "serviceAccountFile": "/k.json"}}}`}, "fcm", ""},
		{loadCase{name: "fcm without a key", args: []string{"$FILE"}, file: `{"push": {"adapter": "fcm"}}`}, "", "push.fcm.serviceAccountFile"},
		{loadCase{name: "apns with a token key", args: []string{"$FILE"}, file: `{"push": {"adapter": "apns", "apns": {"topics": ["com.example.app"], "tokenKeyFile": "/AuthKey.p8", "keyId": "K", "teamId": "T", "environment": "both"}}}`}, "apns", ""},
		{loadCase{name: "apns with a certificate", args: []string{"$FILE"}, file: `{"push": {"adapter": "apns", "apns": {"topics": ["com.example.app"], "certFile": "/c.pem", "certKeyFile": "/k.pem"}}}`}, "apns", ""},
		{loadCase{name: "apns without topics", args: []string{"$FILE"}, file: `{"push": {"adapter": "apns", "apns": {"tokenKeyFile": "/AuthKey.p8", "keyId": "K", "teamId": "T"}}}`}, "", "push.apns.topics"},
		{loadCase{name: "apns token without team", args: []string{"$FILE"}, file: `{"push": {"adapter": "apns", "apns": {"topics": ["a"], "tokenKeyFile": "/AuthKey.p8"}}}`}, "", "teamId"},
		{loadCase{name: "apns with neither", args: []string{"$FILE"}, file: `{"push": {"adapter": "apns", "apns": {"topics": ["a"]}}}`}, "", "tokenKeyFile"},
		{loadCase{name: "apns bad environment", args: []string{"$FILE"}, file: `{"push": {"adapter": "apns", "apns": {"topics": ["a"], "certFile": "/c", "certKeyFile": "/k", "environment": "staging"}}}`}, "", "push.apns.environment"},
		{loadCase{name: "native needs fcm", args: []string{"$FILE"}, file: `{"push": {"adapter": "native", "apns": {"topics": ["a"], "certFile": "/c", "certKeyFile": "/k"}}}`}, "", "push.fcm.serviceAccountFile"},
		{loadCase{name: "parse server ios token and android", args: []string{"$FILE"}, file: `{"push": {"ios": {"token": {"key": "/AuthKey.p8", "keyId": "K", "teamId": "T"}, "topic": "com.example.app", "production": true}, "android": {"firebaseServiceAccount": "/k.json"}}}`}, "", ""},
		{loadCase{name: "parse server ios certificates array", args: []string{"$FILE"}, file: `{"push": {"ios": [{"pfx": "/dev.p12", "passphrase": "x", "bundleId": "com.example.app", "production": false}, {"cert": "/c.pem", "key": "/k.pem", "bundleId": "com.example.app", "production": true}]}}`}, "", ""},
		{loadCase{name: "parse server ios without topic", args: []string{"$FILE"}, file: `{"push": {"ios": {"token": {"key": "/AuthKey.p8", "keyId": "K", "teamId": "T"}}}}`}, "", "push.ios[0]: topic"},
		{loadCase{name: "parse server ios token without teamId", args: []string{"$FILE"}, file: `{"push": {"osx": {"token": {"key": "/AuthKey.p8", "keyId": "K"}, "topic": "a"}}}`}, "", "push.osx[0]: token.teamId"},
		{loadCase{name: "parse server ios cert without key", args: []string{"$FILE"}, file: `{"push": {"tvos": {"cert": "/c.pem", "topic": "a"}}}`}, "", "key is required"},
		{loadCase{name: "parse server ios not an object", args: []string{"$FILE"}, file: `{"push": {"ios": ["x"]}}`}, "", "push.ios"},
		{loadCase{name: "unknown adapter", args: []string{"$FILE"}, file: `{"push": {"adapter": "pigeon"}}`}, "", "push.adapter"},
	}
	for _, tc := range cases {
		t.Run(tc.c.name, func(t *testing.T) {
			o, _, err := tc.c.load(t)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one about %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Push.Adapter != tc.adapter {
				t.Errorf("push.adapter %q, want %q", o.Push.Adapter, tc.adapter)
			}
		})
	}
}
