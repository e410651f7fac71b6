package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/quarrydata/quarry/bench/cluster"
)

// startParse runs Parse Server from the npm project parseDir (its
// node_modules installed, as bench/compare/run.sh does with `npm ci`) on a
// free port against the database, with the same app id and master key as
// the quarry instances, so the same load drives it.
func startParse(parseDir, dir string, i int, db *database) (*instance, error) {
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	parseDir, err = filepath.Abs(parseDir) // the process runs in dir
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(parseDir, "node_modules", "parse-server", "bin", "parse-server")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("-parse %s: no Parse Server installed there (npm ci in that directory): %w", parseDir, err)
	}
	cfg, err := json.Marshal(map[string]any{
		"appId": appID, "masterKey": masterKey, "databaseURI": db.URI,
		"host": "127.0.0.1", "port": port, "mountPath": "/parse",
		"serverURL": fmt.Sprintf("http://127.0.0.1:%d/parse", port),
		"logLevel":  "error", "logsFolder": filepath.Join(dir, fmt.Sprintf("parse-logs-%d", i)),
	})
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, fmt.Sprintf("parse-%d.json", i))
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("parse-%d.log", i)))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", bin, cfgPath)
	cmd.Stdout, cmd.Stderr, cmd.Dir = logf, logf, dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	return &instance{Cmd: cmd, URL: fmt.Sprintf("http://127.0.0.1:%d/parse", port), Log: logf}, nil
}
