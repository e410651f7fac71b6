package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// loadCase is one Load scenario. file, when set, is written to a temporary
// config file and every "$FILE" in args is replaced by its path.
type loadCase struct {
	name string
	args []string
	env  []string
	file string
}

func (c loadCase) load(t *testing.T) (*Options, []string, error) {
	t.Helper()
	args := append([]string(nil), c.args...)
	if c.file != "" {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "$FILE", path)
		}
	}
	return Load(args, c.env)
}

func TestLoadDefaults(t *testing.T) {
	for _, c := range []loadCase{
		{name: "nil"},
		{name: "empty", args: []string{}, env: []string{}},
		{name: "unrelated env", env: []string{"HOME=/root", "PATH=/bin", "NOEQUALS"}},
		{name: "empty values are unset", env: []string{"QUARRY_APP_ID=", "PORT="}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, warns, err := c.load(t)
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Errorf("warnings: %q", warns)
			}
			if !reflect.DeepEqual(o, Defaults()) {
				t.Errorf("got %+v\nwant %+v", o, Defaults())
			}
			if !o.DevMode || o.AppID != DevAppID || o.MasterKey != "" {
				t.Errorf("not a dev start: DevMode=%v appId=%q masterKey=%q", o.DevMode, o.AppID, o.MasterKey)
			}
		})
	}
}

// TestDevStartEnablesLiveQuery: the development start serves LiveQuery for
// every class; naming an app or classes turns that off.
func TestDevStartEnablesLiveQuery(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--appId", "myApp"}, false},
		{[]string{"--liveQuery.classNames", "Message"}, false},
	} {
		o, _, err := Load(c.args, nil)
		if err != nil {
			t.Fatal(err)
		}
		if o.LiveQuery.AllClasses != c.want {
			t.Errorf("%q: LiveQuery.AllClasses = %v, want %v", c.args, o.LiveQuery.AllClasses, c.want)
		}
	}
}

func TestDefaultsValues(t *testing.T) {
	d := Defaults()
	checks := []struct {
		name      string
		got, want any
	}{
		{"appId", d.AppID, "quarry-dev"},
		{"masterKeyIps", d.MasterKeyIPs, []string{"127.0.0.1", "::1"}},
		{"port", d.Port, 1337},
		{"host", d.Host, "0.0.0.0"},
		{"mountPath", d.MountPath, "/parse"},
		{"databaseURI", d.DatabaseURI, "./quarry-data/quarry.db"},
		{"maxUploadSize", d.MaxUploadSize, int64(10 * 1024 * 1024)},
		{"cloudCodeMaxMemory", d.CloudCodeMaxMemory, int64(512 << 20)},
		{"maxLimit", d.MaxLimit, 0},
		{"defaultLimit", d.DefaultLimit, 100},
		{"batchSize", d.BatchSize, 20},
		{"maxScan", d.MaxScan, 10000},
		{"gcHeadroomPercent", d.GCHeadroomPercent, 25},
		{"allowClientClassCreation", d.AllowClientClassCreation, true},
		{"allowOrigin", d.AllowOrigin, []string{"*"}},
		{"graphQLPath", d.GraphQLPath, "/graphql"},
		{"mountGraphQL", d.MountGraphQL, false},
		{"playgroundPath", d.PlaygroundPath, "/playground"},
		{"mountPlayground", d.MountPlayground, false},
		{"maxJSONDepth", d.MaxJSONDepth, 64},
		{"sessionLength", d.SessionLength, 31536000 * time.Second},
		{"logLevel", d.LogLevel, "info"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("default %s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestLoadSources(t *testing.T) {
	cases := []struct {
		loadCase
		check func(t *testing.T, o *Options)
	}{
		// Flags.
		{loadCase{name: "flag space form", args: []string{"--appId", "app1", "--masterKey", "mk"}}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "app1")
			want(t, o.MasterKey, "mk")
			want(t, o.DevMode, false)
		}},
		{loadCase{name: "flag equals form", args: []string{"--appId=a=b", "--port=8080"}}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "a=b")
			want(t, o.Port, 8080)
		}},
		{loadCase{name: "single dash", args: []string{"-appId", "x", "-port=0"}}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "x")
			want(t, o.Port, 0)
		}},
		{loadCase{name: "bool alone is true", args: []string{"--mountGraphQL", "--appId", "a"}}, func(t *testing.T, o *Options) {
			want(t, o.MountGraphQL, true)
			want(t, o.AppID, "a")
		}},
		{loadCase{name: "bool equals false", args: []string{"--allowClientClassCreation=false", "--verbose=1"}}, func(t *testing.T, o *Options) {
			want(t, o.AllowClientClassCreation, false)
			want(t, o.Verbose, true)
			want(t, o.LogLevel, "verbose")
		}},
		{loadCase{name: "bool then literal", args: []string{"--allowClientClassCreation", "false", "--mountGraphQL", "true"}}, func(t *testing.T, o *Options) {
			want(t, o.AllowClientClassCreation, false)
			want(t, o.MountGraphQL, true)
		}},
		{loadCase{name: "bool does not eat config file", args: []string{"--mountGraphQL", "$FILE"}, file: `{"appId":"f"}`}, func(t *testing.T, o *Options) {
			want(t, o.MountGraphQL, true)
			want(t, o.AppID, "f")
		}},
		{loadCase{name: "lists", args: []string{"--masterKeyIps", "10.0.0.0/8, 192.168.1.2,,", "--allowHeaders=X-A,X-B", "--allowOrigin", "https://a.example,https://b.example"}}, func(t *testing.T, o *Options) {
			want(t, o.MasterKeyIPs, []string{"10.0.0.0/8", "192.168.1.2"})
			want(t, o.AllowHeaders, []string{"X-A", "X-B"})
			want(t, o.AllowOrigin, []string{"https://a.example", "https://b.example"})
		}},
		{loadCase{name: "empty list", args: []string{"--masterKeyIps="}}, func(t *testing.T, o *Options) {
			want(t, o.MasterKeyIPs, []string{})
		}},
		{loadCase{name: "sizes and seconds", args: []string{"--maxUploadSize", "512kb", "--sessionLength", "3600"}}, func(t *testing.T, o *Options) {
			want(t, o.MaxUploadSize, int64(512*1024))
			want(t, o.SessionLength, time.Hour)
		}},
		{loadCase{name: "cloud code memory", args: []string{"--cloudCodeMaxMemory", "64MB"}}, func(t *testing.T, o *Options) {
			want(t, o.CloudCodeMaxMemory, int64(64<<20))
		}},
		{loadCase{name: "cloud code memory off", args: []string{"$FILE"}, file: `{"cloudCodeMaxMemory": 0}`}, func(t *testing.T, o *Options) {
			want(t, o.CloudCodeMaxMemory, int64(0))
		}},
		{loadCase{name: "limits", args: []string{"--maxLimit", "1000", "--defaultLimit", "50", "--batchSize", "5", "--maxScan", "0", "--maxJSONDepth", "8"}}, func(t *testing.T, o *Options) {
			want(t, o.MaxLimit, 1000)
			want(t, o.DefaultLimit, 50)
			want(t, o.BatchSize, 5)
			want(t, o.MaxScan, 0)
			want(t, o.MaxJSONDepth, 8)
		}},
		{loadCase{name: "liveQuery json flag", args: []string{"--liveQuery", `{"classNames":["Game","_User"],"redisURL":"redis://r:6379"}`}}, func(t *testing.T, o *Options) {
			want(t, o.LiveQuery, LiveQueryOptions{ClassNames: []string{"Game", "_User"}, RedisURL: "redis://r:6379"})
		}},
		{loadCase{name: "liveQuery dotted flags", args: []string{"--liveQuery.classNames", "A,B", "--liveQuery.redisURL=rediss://h"}}, func(t *testing.T, o *Options) {
			want(t, o.LiveQuery, LiveQueryOptions{ClassNames: []string{"A", "B"}, RedisURL: "rediss://h"})
		}},
		{loadCase{name: "liveQueryServerOptions file", args: []string{"$FILE"}, file: `{"liveQueryServerOptions": {"keyPairs": {"javascriptKey": "js", "masterKey": "m"},
			"websocketTimeout": 2000, "cacheTimeout": 0, "logLevel": "verbose", "port": 1338, "redisURL": "redis://127.0.0.1:6379/2",
			"serverURL": "http://127.0.0.1:1337/parse", "redisOptions": {}}}`}, func(t *testing.T, o *Options) {
			lq := o.LiveQueryServer
			want(t, lq.KeyPairs.Map(), map[string]string{"javascriptKey": "js", "masterKey": "m"})
			want(t, lq.WebsocketTimeout, 2000)
			want(t, lq.CacheTimeout, 0)
			want(t, lq.LogLevel, "VERBOSE")
			want(t, lq.Port, 1338)
			want(t, lq.RedisURL, "redis://127.0.0.1:6379/2")
			want(t, lq.ServerURL, "http://127.0.0.1:1337/parse")
		}},
		{loadCase{name: "liveQueryServerOptions defaults and env", env: []string{"PARSE_LIVE_QUERY_SERVER_KEY_PAIRS={\"restAPIKey\":\"r\"}",
			"PARSE_LIVE_QUERY_SERVER_WEBSOCKET_TIMEOUT=500"}}, func(t *testing.T, o *Options) {
			want(t, o.LiveQueryServer.KeyPairs.Map(), map[string]string{"restAPIKey": "r"})
			want(t, o.LiveQueryServer.WebsocketTimeout, 500)
			want(t, o.LiveQueryServer.CacheTimeout, DefaultCacheTimeout)
			want(t, o.LiveQueryServer.LogLevel, "INFO")
		}},
		{loadCase{name: "paths normalized", args: []string{"--mountPath", "/api/v1/", "--graphQLPath=/gql//", "--playgroundPath", "/"}}, func(t *testing.T, o *Options) {
			want(t, o.MountPath, "/api/v1")
			want(t, o.GraphQLPath, "/gql")
			want(t, o.PlaygroundPath, "/")
		}},
		{loadCase{name: "logLevel case folded", args: []string{"--logLevel", "DEBUG", "--verbose"}}, func(t *testing.T, o *Options) {
			want(t, o.LogLevel, "debug")
			want(t, o.Verbose, true)
		}},
		{loadCase{name: "strings", args: []string{"--host", "127.0.0.1", "--serverURL", "http://localhost:1337/parse", "--publicServerURL", "https://api.example.com/parse", "--databaseURI", "/var/lib/q.db",
			"--readOnlyMasterKey", "ro", "--clientKey", "ck", "--javascriptKey", "jk", "--restAPIKey", "rk", "--dotNetKey", "dk", "--fileKey", "fk"}}, func(t *testing.T, o *Options) {
			want(t, o.Host, "127.0.0.1")
			want(t, o.ServerURL, "http://localhost:1337/parse")
			want(t, o.PublicServerURL, "https://api.example.com/parse")
			want(t, o.DatabaseURI, "/var/lib/q.db")
			want(t, []string{o.ReadOnlyMasterKey, o.ClientKey, o.JavaScriptKey, o.RESTAPIKey, o.DotNetKey, o.FileKey}, []string{"ro", "ck", "jk", "rk", "dk", "fk"})
		}},
		{loadCase{name: "double dash ends flags", args: []string{"--port", "1", "--", "$FILE"}, file: `{"appId":"f"}`}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "f")
			want(t, o.Port, 1)
		}},
		{loadCase{name: "negative value taken as value", args: []string{"--maxLimit", "-0"}}, func(t *testing.T, o *Options) {
			want(t, o.MaxLimit, 0)
		}},

		// Environment.
		{loadCase{name: "quarry env", env: []string{"QUARRY_APP_ID=ea", "QUARRY_MASTER_KEY=em", "QUARRY_DATABASE_URI=/d.db", "QUARRY_PORT=9000", "QUARRY_MOUNT_GRAPHQL=true", "QUARRY_MASTER_KEY_IPS=1.2.3.4,::1", "QUARRY_MAX_UPLOAD_SIZE=1gb", "QUARRY_MAX_JSON_DEPTH=10"}}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "ea")
			want(t, o.MasterKey, "em")
			want(t, o.DatabaseURI, "/d.db")
			want(t, o.Port, 9000)
			want(t, o.MountGraphQL, true)
			want(t, o.MasterKeyIPs, []string{"1.2.3.4", "::1"})
			want(t, o.MaxUploadSize, int64(1<<30))
			want(t, o.MaxJSONDepth, 10)
			want(t, o.DevMode, false)
		}},
		{loadCase{name: "parse server env", env: []string{"PARSE_SERVER_APPLICATION_ID=pa", "PARSE_SERVER_MASTER_KEY=pm", "PARSE_SERVER_DATABASE_URI=/p.db", "PORT=8081", "PARSE_PUBLIC_SERVER_URL=https://x.example/parse", "PARSE_SERVER_URL=http://localhost:8081/parse", "VERBOSE=true", "PARSE_SERVER_GRAPHQL_PATH=/g"}}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "pa")
			want(t, o.MasterKey, "pm")
			want(t, o.DatabaseURI, "/p.db")
			want(t, o.Port, 8081)
			want(t, o.PublicServerURL, "https://x.example/parse")
			want(t, o.ServerURL, "http://localhost:8081/parse")
			want(t, o.LogLevel, "verbose")
			want(t, o.GraphQLPath, "/g")
		}},
		{loadCase{name: "quarry env wins over parse env", env: []string{"PARSE_SERVER_APPLICATION_ID=pa", "QUARRY_APP_ID=qa", "PORT=1", "QUARRY_PORT=2"}}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "qa")
			want(t, o.Port, 2)
		}},
		{loadCase{name: "liveQuery env", env: []string{"PARSE_SERVER_LIVE_QUERY={\"classNames\":[\"A\"],\"redisURL\":\"redis://x\"}", "QUARRY_LIVE_QUERY_CLASS_NAMES=B,C"}}, func(t *testing.T, o *Options) {
			want(t, o.LiveQuery.ClassNames, []string{"B", "C"})
			want(t, o.LiveQuery.RedisURL, "redis://x")
		}},

		// Config file.
		{loadCase{name: "file values", args: []string{"$FILE"}, file: `{
			"appId": "fa", "masterKey": "fm", "port": 4040, "mountGraphQL": true,
			"masterKeyIps": ["0.0.0.0/0", "::/0"], "maxUploadSize": "20mb",
			"sessionLength": 60, "liveQuery": {"classNames": ["Post"]},
			"allowOrigin": "*", "logLevel": null, "maxScan": 5
		}`}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "fa")
			want(t, o.MasterKey, "fm")
			want(t, o.Port, 4040)
			want(t, o.MountGraphQL, true)
			want(t, o.MasterKeyIPs, []string{"0.0.0.0/0", "::/0"})
			want(t, o.MaxUploadSize, int64(20<<20))
			want(t, o.SessionLength, time.Minute)
			want(t, o.LiveQuery.ClassNames, []string{"Post"})
			want(t, o.AllowOrigin, []string{"*"})
			want(t, o.LogLevel, "info")
			want(t, o.MaxScan, 5)
			want(t, o.ConfigFile != "", true)
		}},
		{loadCase{name: "file strings for numbers and bools", args: []string{"$FILE"}, file: `{"port": "7000", "mountGraphQL": "true", "maxUploadSize": 1000, "masterKeyIps": "127.0.0.1"}`}, func(t *testing.T, o *Options) {
			want(t, o.Port, 7000)
			want(t, o.MountGraphQL, true)
			want(t, o.MaxUploadSize, int64(1000))
			want(t, o.MasterKeyIPs, []string{"127.0.0.1"})
		}},
		{loadCase{name: "apps form", args: []string{"$FILE"}, file: `{"apps": [{"appId": "one", "port": 1400}]}`}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "one")
			want(t, o.Port, 1400)
		}},
		{loadCase{name: "config file after flags", args: []string{"--port", "5", "$FILE"}, file: `{"port": 6, "appId": "z"}`}, func(t *testing.T, o *Options) {
			want(t, o.Port, 5)
			want(t, o.AppID, "z")
		}},

		// Precedence: defaults < file < env < flags, per option.
		{loadCase{name: "precedence",
			args: []string{"$FILE", "--appId", "flag"},
			env:  []string{"QUARRY_APP_ID=env", "QUARRY_MASTER_KEY=env", "PORT=2000"},
			file: `{"appId": "file", "masterKey": "file", "port": 1000, "host": "file.local", "batchSize": 3}`}, func(t *testing.T, o *Options) {
			want(t, o.AppID, "flag")
			want(t, o.MasterKey, "env")
			want(t, o.Port, 2000)
			want(t, o.Host, "file.local")
			want(t, o.BatchSize, 3)
			want(t, o.MountPath, "/parse")
		}},
		{loadCase{name: "liveQuery keys merge across sources",
			args: []string{"$FILE", "--liveQuery.classNames", "Flag"},
			file: `{"liveQuery": {"classNames": ["File"], "redisURL": "redis://file"}}`}, func(t *testing.T, o *Options) {
			want(t, o.LiveQuery, LiveQueryOptions{ClassNames: []string{"Flag"}, RedisURL: "redis://file"})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, warns, err := c.load(t)
			if err != nil {
				t.Fatalf("Load: %v (warnings %q)", err, warns)
			}
			c.check(t, o)
		})
	}
}

func want(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

func TestParseServerConfigFile(t *testing.T) {
	c := loadCase{args: []string{"$FILE"}, file: `{
		"appId": "myAppId",
		"masterKey": "myMasterKey",
		"databaseURI": "./data/app.db",
		"port": 1337,
		"serverURL": "http://localhost:1337/parse",
		"cloud": "./cloud/main.js",
		"push": {"android": {"apiKey": "x"}},
		"auth": {"facebook": {"appIds": ["1"]}},
		"filesAdapter": {"module": "@parse/fs-files-adapter"},
		"liveQuery": {"classNames": ["Posts", "Comments"], "redisOptions": {}},
		"startLiveQueryServer": true,
		"verbose": false,
		"logsFolder": null,
		"allowClientClassCreation": false,
		"masterKeyIps": ["0.0.0.0/0", "::0"]
	}`}
	o, warns, err := c.load(t)
	if err != nil {
		t.Fatal(err)
	}
	want(t, o.AppID, "myAppId")
	want(t, o.LiveQuery.ClassNames, []string{"Posts", "Comments"})
	want(t, o.AllowClientClassCreation, false)
	want(t, o.Cloud, "./cloud/main.js")
	want(t, o.Auth.Providers, map[string]any{"facebook": map[string]any{"appIds": []any{"1"}}})
	for _, w := range []string{"push.android.apiKey", "filesAdapter", "liveQuery.redisOptions", "startLiveQueryServer"} {
		if !hasWarning(warns, w) {
			t.Errorf("no warning about %s in %q", w, warns)
		}
	}
	if len(warns) != 4 {
		t.Errorf("got %d warnings, want 4: %q", len(warns), warns)
	}
}

func hasWarning(warns []string, prefix string) bool {
	for _, w := range warns {
		if strings.HasPrefix(w, prefix+" ") || strings.HasPrefix(w, prefix+":") {
			return true
		}
	}
	return false
}

func TestLoadWarnings(t *testing.T) {
	cases := []struct {
		loadCase
		want []string // substrings, one warning each
	}{
		{loadCase{name: "ignored file option", args: []string{"$FILE"}, file: `{"cluster": 4}`},
			[]string{`cluster (config file `, `ignored (no meaning here: one Quarry process uses every core`}},
		{loadCase{name: "ignored flag skips its value", args: []string{"--push", `{"adapterOptions":{}}`, "--port", "2"}},
			[]string{"push.adapterOptions (flag --push): ignored (no meaning here: options of a JavaScript push adapter"}},
		{loadCase{name: "ignored flag before next flag", args: []string{"--enableExpressErrorHandler", "--port", "2"}},
			[]string{"enableExpressErrorHandler (flag --enableExpressErrorHandler): ignored (no meaning here: there is no Express)"}},
		{loadCase{name: "ignored flag keeps config file", args: []string{"--startLiveQueryServer", "$FILE"}, file: `{"port": 2}`},
			[]string{"startLiveQueryServer (flag --startLiveQueryServer): ignored (no meaning here: LiveQuery is served on the API's port"}},
		{loadCase{name: "ignored liveQuery key", args: []string{"--liveQuery", `{"pubSubAdapter":"x"}`}},
			[]string{"liveQuery.pubSubAdapter (flag --liveQuery): ignored (no meaning here: LiveQuery scales out"}},
		{loadCase{name: "unknown quarry env", env: []string{"QUARRY_APPID=x"}},
			[]string{"env QUARRY_APPID: ignored, not a Quarry option"}},
		{loadCase{name: "unsupported parse env", env: []string{"PARSE_SERVER_CLUSTER=1"}},
			[]string{"env PARSE_SERVER_CLUSTER: ignored (no meaning here"}},
		{loadCase{name: "shadowed parse env", env: []string{"QUARRY_APP_ID=a", "PARSE_SERVER_APPLICATION_ID=b"}},
			[]string{"env PARSE_SERVER_APPLICATION_ID: ignored, QUARRY_APP_ID takes precedence"}},
		{loadCase{name: "apps with top-level keys", args: []string{"$FILE"}, file: `{"port": 1, "apps": [{"appId": "a"}]}`},
			[]string{`port (config file `, "belong inside apps[0]"}},
		{loadCase{name: "playground without graphql", args: []string{"--mountPlayground"}},
			[]string{"mountPlayground (flag --mountPlayground): accepted, but it has no effect yet: the playground is served only with mountGraphQL"}},
		{loadCase{name: "fileKey", args: []string{"--fileKey", "k"}},
			[]string{"fileKey (flag --fileKey): accepted, but it has no effect yet: legacy hosted file URLs are not made"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, warns, err := c.load(t)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(warns) != 1 {
				t.Fatalf("got %d warnings, want 1: %q", len(warns), warns)
			}
			for _, s := range c.want {
				if !strings.Contains(warns[0], s) {
					t.Errorf("warning %q does not contain %q", warns[0], s)
				}
			}
			if strings.HasPrefix(c.name, "ignored flag") {
				want(t, o.Port, 2)
			}
		})
	}
}

// TestServedOptionsDoNotWarn: options Quarry acts on say nothing at
// start-up (mountGraphQL used to claim the API was not served).
func TestServedOptionsDoNotWarn(t *testing.T) {
	for _, args := range [][]string{{"--mountGraphQL"}, {"--mountGraphQL", "--mountPlayground"}} {
		_, warns, err := loadCase{name: "served", args: args}.load(t)
		if err != nil {
			t.Fatalf("%v: Load: %v", args, err)
		}
		if len(warns) != 0 {
			t.Errorf("%v: warnings %q, want none", args, warns)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	cases := []struct {
		loadCase
		option string // Option of the *OptionError, "" for errors about the file or arguments
		is     error  // errors.Is target, optional
		msg    string // substring of the error message
	}{
		{loadCase{name: "unknown flag", args: []string{"--apId", "x"}}, "apId", ErrUnknownOption, `unknown option "apId" (flag --apId); did you mean "appId"? see --help`},
		{loadCase{name: "unknown flag case", args: []string{"--appid=x"}}, "appid", ErrUnknownOption, `did you mean "appId"?`},
		{loadCase{name: "unknown flag no hint", args: []string{"--frobnicate"}}, "frobnicate", ErrUnknownOption, `unknown option "frobnicate" (flag --frobnicate); see --help`},
		{loadCase{name: "unknown file key", args: []string{"$FILE"}, file: `{"appId": "a", "mastrKey": "m"}`}, "mastrKey", ErrUnknownOption, `did you mean "masterKey"?`},
		{loadCase{name: "unknown liveQuery key", args: []string{"$FILE"}, file: `{"liveQuery": {"classes": ["A"]}}`}, "liveQuery.classes", ErrUnknownOption, "see --help"},
		{loadCase{name: "missing value", args: []string{"--appId"}}, "appId", nil, "needs a value"},
		{loadCase{name: "two config files", args: []string{"a.json", "b.json"}}, "", nil, "only one config file"},
		{loadCase{name: "mongodb databaseURI", args: []string{"--databaseURI", "mongodb://u:pw@localhost:27017/app"}}, "databaseURI", nil, "quarry import"},
		{loadCase{name: "mongodb+srv databaseURI", args: []string{"--databaseURI", "mongodb+srv://cluster.example/app"}}, "databaseURI", nil, "postgres://"},
		{loadCase{name: "file not found", args: []string{"/nonexistent/quarry.json"}}, "", os.ErrNotExist, "config file"},
		{loadCase{name: "bad json", args: []string{"$FILE"}, file: "{\n  \"appId\": \"a\",\n  \"port\": ,\n}"}, "", nil, "line 3, column 11"},
		{loadCase{name: "trailing json", args: []string{"$FILE"}, file: `{"appId": "a"} {}`}, "", nil, "after the top-level value"},
		{loadCase{name: "empty file", args: []string{"$FILE"}, file: " "}, "", nil, "empty"},
		{loadCase{name: "json array", args: []string{"$FILE"}, file: `[1]`}, "", nil, "want a JSON object of options, got an array"},
		{loadCase{name: "two apps", args: []string{"$FILE"}, file: `{"apps": [{"appId": "a"}, {"appId": "b"}]}`}, "", nil, "got 2 apps"},
		{loadCase{name: "no apps", args: []string{"$FILE"}, file: `{"apps": []}`}, "", nil, "exactly one app"},
		{loadCase{name: "apps not objects", args: []string{"$FILE"}, file: `{"apps": ["a"]}`}, "", nil, "apps[0] must be an object"},
		{loadCase{name: "port too big", args: []string{"--port", "70000"}}, "port", nil, "option port (flag --port): must be between 1 and 65535 (or 0 for any free port), got 70000"},
		{loadCase{name: "port negative from env", env: []string{"PORT=-1"}}, "port", nil, "(env PORT)"},
		{loadCase{name: "port not a number", args: []string{"--port", "http"}}, "port", nil, `want an integer, got "http"`},
		{loadCase{name: "port fraction in file", args: []string{"$FILE"}, file: `{"port": 1.5}`}, "port", nil, `want an integer`},
		{loadCase{name: "port bool in file", args: []string{"$FILE"}, file: `{"port": true}`}, "port", nil, `got a boolean`},
		{loadCase{name: "mountPath relative", args: []string{"--mountPath", "parse"}}, "mountPath", nil, `must start with "/"`},
		{loadCase{name: "graphQLPath query", args: []string{"--graphQLPath", "/g?x"}}, "graphQLPath", nil, "plain path"},
		{loadCase{name: "batchSize zero", args: []string{"--batchSize", "0"}}, "batchSize", nil, "must be at least 1, got 0"},
		{loadCase{name: "maxLimit negative", args: []string{"--maxLimit=-1"}}, "maxLimit", nil, "must be at least 0"},
		{loadCase{name: "defaultLimit zero", args: []string{"--defaultLimit=0"}}, "defaultLimit", nil, "must be at least 1"},
		{loadCase{name: "maxScan negative", args: []string{"--maxScan=-5"}}, "maxScan", nil, "must be at least 0"},
		{loadCase{name: "index without field", args: []string{"--indexes", "GameScore.score,Broken"}}, "indexes", nil, "is not Class.field"},
		{loadCase{name: "maxJSONDepth zero", args: []string{"--maxJSONDepth=0"}}, "maxJSONDepth", nil, "must be at least 1"},
		{loadCase{name: "size garbage", args: []string{"--maxUploadSize", "lots"}}, "maxUploadSize", ErrInvalidSize, `invalid size "lots"`},
		{loadCase{name: "size zero", args: []string{"--maxUploadSize", "0mb"}}, "maxUploadSize", nil, "more than 0 bytes"},
		{loadCase{name: "cloud code memory negative", args: []string{"--cloudCodeMaxMemory=-1"}}, "cloudCodeMaxMemory", ErrInvalidSize, `invalid size "-1"`},
		{loadCase{name: "cloud code memory tiny", args: []string{"--cloudCodeMaxMemory", "64kb"}}, "cloudCodeMaxMemory", nil, "must be 0 (no bound) or at least 1mb, got 65536 bytes"},
		{loadCase{name: "size array in file", args: []string{"$FILE"}, file: `{"maxUploadSize": [1]}`}, "maxUploadSize", nil, "got an array"},
		{loadCase{name: "bool garbage", args: []string{"--mountGraphQL=maybe"}}, "mountGraphQL", nil, `want true or false, got "maybe"`},
		{loadCase{name: "bool env garbage", env: []string{"QUARRY_VERBOSE=yes please"}}, "verbose", nil, "(env QUARRY_VERBOSE)"},
		{loadCase{name: "list item not string", args: []string{"$FILE"}, file: `{"allowHeaders": ["X-A", 3]}`}, "allowHeaders", nil, "item 1 is a number"},
		{loadCase{name: "string gets object", args: []string{"$FILE"}, file: `{"appId": {"x": 1}}`}, "appId", nil, "want a string, got an object"},
		{loadCase{name: "bad master key ip", args: []string{"--masterKeyIps", "127.0.0.1,localhost"}}, "masterKeyIps", nil, `"localhost" is not an IP address or CIDR range`},
		{loadCase{name: "read-only equals master", args: []string{"--masterKey", "k", "--readOnlyMasterKey", "k"}}, "readOnlyMasterKey", nil, "must differ from masterKey"},
		{loadCase{name: "empty appId", args: []string{"--appId="}}, "appId", nil, "must not be empty"},
		{loadCase{name: "empty host", args: []string{"--host="}}, "host", nil, "must not be empty"},
		{loadCase{name: "empty databaseURI", args: []string{"--databaseURI", ""}}, "databaseURI", nil, "must not be empty"},
		{loadCase{name: "no origins", args: []string{"--allowOrigin", ""}}, "allowOrigin", nil, "at least one origin"},
		{loadCase{name: "bad log level", args: []string{"--logLevel", "loud"}}, "logLevel", nil, `got "loud"`},
		{loadCase{name: "bad serverURL", args: []string{"--serverURL", "localhost:1337/parse"}}, "serverURL", nil, "http:// or https://"},
		{loadCase{name: "bad publicServerURL", args: []string{"--publicServerURL", "ftp://x/y"}}, "publicServerURL", nil, "http:// or https://"},
		{loadCase{name: "liveQuery not json", args: []string{"--liveQuery", "A,B"}}, "liveQuery", nil, "want a JSON object"},
		{loadCase{name: "liveQuery array in file", args: []string{"$FILE"}, file: `{"liveQuery": ["A"]}`}, "liveQuery", nil, "got an array"},
		{loadCase{name: "liveQuery bad class", args: []string{"--liveQuery.classNames", "Good,Bad-Name"}}, "liveQuery.classNames", nil, `"Bad-Name" is not a class name`},
		{loadCase{name: "liveQuery bad redis", args: []string{"--liveQuery.redisURL", "http://x"}}, "liveQuery.redisURL", nil, "redis://"},
		{loadCase{name: "liveQueryServerOptions unknown key pair", args: []string{"--liveQueryServerOptions", `{"keyPairs": {"jsKey": "x"}}`}}, "liveQueryServerOptions.keyPairs.jsKey", ErrUnknownOption, "see --help"},
		{loadCase{name: "liveQueryServerOptions bad log level", args: []string{"--liveQueryServerOptions.logLevel", "loud"}}, "liveQueryServerOptions.logLevel", nil, `got "LOUD"`},
		{loadCase{name: "liveQueryServerOptions zero timeout", args: []string{"--liveQueryServerOptions.websocketTimeout", "0"}}, "liveQueryServerOptions.websocketTimeout", nil, "at least 1 ms"},
		{loadCase{name: "liveQueryServerOptions bad redis", args: []string{"--liveQueryServerOptions.redisURL", "http://x"}}, "liveQueryServerOptions.redisURL", nil, "redis://"},
		{loadCase{name: "graphql on mount path", args: []string{"--mountGraphQL", "--graphQLPath", "/parse/"}}, "graphQLPath", nil, `must differ from mountPath "/parse"`},
		{loadCase{name: "playground on graphql path", args: []string{"--mountGraphQL", "--mountPlayground", "--playgroundPath", "/graphql"}}, "playgroundPath", nil, "must differ from graphQLPath"},
		{loadCase{name: "session length zero", args: []string{"--sessionLength", "0"}}, "sessionLength", nil, "at least 1 second"},
		{loadCase{name: "session length huge", args: []string{"--sessionLength", "99999999999999"}}, "sessionLength", nil, "out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, _, err := c.load(t)
			if err == nil {
				t.Fatalf("no error; options %+v", o)
			}
			if o != nil {
				t.Errorf("options returned with an error")
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not contain %q", err, c.msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			var oe *OptionError
			switch {
			case c.option == "" && errors.As(err, &oe):
				t.Errorf("unexpected *OptionError for %s", oe.Option)
			case c.option != "" && !errors.As(err, &oe):
				t.Errorf("error %q is not an *OptionError", err)
			case c.option != "" && oe.Option != c.option:
				t.Errorf("error names option %q, want %q", oe.Option, c.option)
			}
		})
	}
}

func TestLoadReportsEveryError(t *testing.T) {
	_, _, err := Load([]string{"--port", "0x", "--batchSize", "0", "--mountPath", "x"}, []string{"QUARRY_MAX_LIMIT=-3"})
	if err == nil {
		t.Fatal("no error")
	}
	var names []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var oe *OptionError
		if !errors.As(e, &oe) {
			t.Fatalf("%v is not an *OptionError", e)
		}
		names = append(names, oe.Option)
	}
	want(t, names, []string{"port", "mountPath", "maxLimit", "batchSize"})
}

func TestLoadHelp(t *testing.T) {
	for _, args := range [][]string{
		{"-h"}, {"--help"}, {"-help"},
		{"--port", "1", "--help"},
		{"--bogus", "-h"},
		{"missing.json", "--help"},
	} {
		o, warns, err := Load(args, []string{"PORT=nope"})
		if !errors.Is(err, ErrHelp) || o != nil || warns != nil {
			t.Errorf("Load(%q) = %v, %q, %v; want ErrHelp", args, o, warns, err)
		}
	}
	// After "--" a "--help" is a file name, not a request for help.
	if _, _, err := Load([]string{"--", "--help"}, nil); err == nil || errors.Is(err, ErrHelp) {
		t.Errorf("Load(-- --help) = %v, want a file error", err)
	}
}

func TestLoadRateLimit(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		want    []RateLimitOptions
		wantErr string
	}{
		{"array", []string{"--rateLimit", `[{"requestPath": "/functions/*", "requestMethods": ["post"], "requestTimeWindow": 1000, "requestCount": 2, "errorResponseMessage": "slow down", "includeMasterKey": true, "redisUrl": "redis://127.0.0.1:6379/0"}]`},
			[]RateLimitOptions{{RequestPath: "/functions/*", RequestMethods: []string{"post"}, RequestTimeWindow: 1000, RequestCount: 2,
				ErrorResponseMessage: "slow down", IncludeMasterKey: true, RedisURL: "redis://127.0.0.1:6379/0"}}, ""},
		{"one object, one method", []string{"--rateLimit", `{"requestPath": "*", "requestMethods": "GET", "requestTimeWindow": 10, "requestCount": 1}`},
			[]RateLimitOptions{{RequestPath: "*", RequestMethods: []string{"GET"}, RequestTimeWindow: 10, RequestCount: 1}}, ""},
		{"unknown key", []string{"--rateLimit", `[{"requestPath": "*", "requestTimeWindow": 10, "requestCount": 1, "windowMs": 3}]`}, nil, "windowMs: unknown key"},
		{"no count", []string{"--rateLimit", `[{"requestPath": "*", "requestTimeWindow": 10}]`}, nil, "requestCount must be a positive number"},
		{"bad method", []string{"--rateLimit", `[{"requestPath": "*", "requestTimeWindow": 10, "requestCount": 1, "requestMethods": ["FETCH"]}]`}, nil, `"FETCH" is not GET`},
		{"bad redis", []string{"--rateLimit", `[{"requestPath": "*", "requestTimeWindow": 10, "requestCount": 1, "redisUrl": "http://x"}]`}, nil, "redisUrl: want a redis://"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, _, err := Load(c.args, nil)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(o.RateLimit, c.want) {
				t.Fatalf("got %+v, want %+v", o.RateLimit, c.want)
			}
		})
	}
}

// TestCompatibility: "parse-server" makes users private unless
// enforcePrivateUsers is set either way; other values are refused.
func TestCompatibility(t *testing.T) {
	cases := []struct {
		args    []string
		private bool
	}{
		{nil, false},
		{[]string{"--compatibility", "specification"}, false},
		{[]string{"--compatibility", "parse-server"}, true},
		{[]string{"--compatibility", "parse-server", "--enforcePrivateUsers=false"}, false},
	}
	for _, c := range cases {
		o, _, err := loadCase{name: "compat", args: c.args}.load(t)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if o.EnforcePrivateUsers != c.private {
			t.Errorf("%v: enforcePrivateUsers = %v, want %v", c.args, o.EnforcePrivateUsers, c.private)
		}
	}
	if _, _, err := (loadCase{name: "bad", args: []string{"--compatibility", "parse"}}).load(t); err == nil || !strings.Contains(err.Error(), `must be "specification" or "parse-server"`) {
		t.Errorf("a bad value: %v", err)
	}
}
