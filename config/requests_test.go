package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestRequestOptionsFromParseConfigFile: the request options read from a
// Parse Server config file, flags and variables in Parse's forms.
func TestRequestOptionsFromParseConfigFile(t *testing.T) {
	cases := []struct {
		loadCase
		check   func(o *Options) bool
		wantErr string
	}{
		{loadCase: loadCase{name: "defaults"}, check: func(o *Options) bool {
			return reflect.DeepEqual(o.MaintenanceKeyIPs, []string{"127.0.0.1", "::1"}) && reflect.DeepEqual(o.TrustProxy, TrustProxy{}) &&
				len(o.RequestKeywordDenylist) == 3 && o.EncodeParseObjectInCloudFunction && !o.AllowExpiredAuthDataToken
		}},
		{loadCase: loadCase{name: "file", args: []string{"$FILE"}, file: `{"maintenanceKey": "mk", "maintenanceKeyIps": ["10.0.0.0/8"],
			"trustProxy": 2, "requestKeywordDenylist": [{"key": "^x"}], "enableCollationCaseComparison": true,
			"allowExpiredAuthDataToken": true, "encodeParseObjectInCloudFunction": true}`},
			check: func(o *Options) bool {
				return o.MaintenanceKey == "mk" && o.MaintenanceKeyIPs[0] == "10.0.0.0/8" && o.TrustProxy.Hops == 2 &&
					o.RequestKeywordDenylist[0]["key"] == "^x" && o.EnableCollationCaseComparison && o.AllowExpiredAuthDataToken
			}},
		{loadCase: loadCase{name: "trustProxy true", args: []string{"$FILE"}, file: `{"trustProxy": true}`},
			check: func(o *Options) bool { return o.TrustProxy.All }},
		{loadCase: loadCase{name: "trustProxy list", args: []string{"--trustProxy", "loopback, 10.0.0.0/8"}},
			check: func(o *Options) bool {
				return reflect.DeepEqual(o.TrustProxy.Addrs, []string{"loopback", "10.0.0.0/8"})
			}},
		{loadCase: loadCase{name: "trustProxy env hops", env: []string{"PARSE_SERVER_TRUST_PROXY=1"}},
			check: func(o *Options) bool { return o.TrustProxy.Hops == 1 }},
		{loadCase: loadCase{name: "trustProxy junk", args: []string{"--trustProxy", "proxy.example.com"}}, wantErr: "trustProxy"},
		{loadCase: loadCase{name: "bad regexp", args: []string{"$FILE"}, file: `{"requestKeywordDenylist": [{"key": "("}]}`},
			wantErr: "requestKeywordDenylist"},
		{loadCase: loadCase{name: "empty entry", args: []string{"$FILE"}, file: `{"requestKeywordDenylist": [{}]}`},
			wantErr: "requestKeywordDenylist"},
		{loadCase: loadCase{name: "maintenance key is the master key", args: []string{"--masterKey", "k", "--maintenanceKey", "k"}},
			wantErr: "maintenanceKey"},
		{loadCase: loadCase{name: "bad maintenance ip", args: []string{"--maintenanceKeyIps", "10.0.0.0/99"}}, wantErr: "maintenanceKeyIps"},
		{loadCase: loadCase{name: "schema option", args: []string{"$FILE"}, file: `{"schema": {"definitions": [{"className": "A",
			"indexes": {"x_1": {"x": 1}}}], "lockSchemas": true}}`},
			check: func(o *Options) bool {
				return o.SchemaSwitch("lockSchemas") && o.SchemaDefinitions()[0]["className"] == "A"
			}},
		{loadCase: loadCase{name: "schema without class names", args: []string{"$FILE"}, file: `{"schema": {"definitions": [{}]}}`},
			wantErr: "className"},
		{loadCase: loadCase{name: "schema callbacks", args: []string{"$FILE"}, file: `{"schema": {"beforeMigration": "f"}}`},
			wantErr: "unknown key"},
		{loadCase: loadCase{name: "objects not encoded", args: []string{"$FILE"}, file: `{"encodeParseObjectInCloudFunction": false}`},
			wantErr: "Parse Server 9 removed the option"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, warns, err := c.load(t)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one about %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Errorf("warnings %q", warns)
			}
			if !c.check(o) {
				t.Errorf("options not as set: %+v", o)
			}
		})
	}
}
