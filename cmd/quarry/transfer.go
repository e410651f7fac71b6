package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/server"
	"github.com/quarrydata/quarry/store"
	"github.com/quarrydata/quarry/transfer"
)

const importUsage = `usage: quarry import --from DIR|FILE|postgres://... [--filesFrom DIR | --filesFromURL URL] [--resume] [--batch N] [--progress auto|bar|plain|none] [server options]

Imports a Parse Server database into the data file named by databaseURI
(--databaseURI, QUARRY_DATABASE_URI or a config file, as for the server).
The server must not be running on that file, and the file must be new
unless --resume continues an interrupted import.

--from names a directory of collection files (or one file), one per
collection, named after it:
  <Class>.json   mongoexport output (one Extended JSON document per line,
                 or --jsonArray), or Parse Dashboard's {"results": [...]}
  <Class>.bson   mongodump output (.json.gz and .bson.gz are read too)
  _SCHEMA.json   class schemas with CLPs and indexes
  _Join:<key>:<Class>.json  relation memberships (also _Join%3A...)
or a Parse Server PostgreSQL database (postgres://user:pass@host/db), read
directly: its _SCHEMA, class and _Join tables.
objectIds, createdAt/updatedAt, ACLs, pointers, relations, files, password
hashes (users keep their passwords) and sessions are kept.

--filesFrom DIR
             also copy the bytes of every file the objects name, from the
             directory of Parse Server's filesystem adapter (files/, or
             files/<filesSubDirectory>, where Parse Server ran), or from
             GridFS: a MongoDB export holding fs.files and fs.chunks
--filesFromURL URL
             the same from the old server's public files address,
             <serverURL>/files/<appId>; files go into the configured files
             adapter (filesSubDirectory, filesAdapter s3, ...)
--resume     continue after the last committed batch of an interrupted import
             (its checkpoint is <data file>.import.json)
--batch N    documents per commit (default 2000)
--progress   auto: a bar on a terminal, plain lines otherwise (default)

Built-in master-only classes (_Hooks, _JobSchedule, _JobStatus,
_PushStatus, _Audience, _Idempotency) keep their master-only permissions
whatever the dump says. A malformed class_permissions in _SCHEMA stops the
import. A document whose objectId is not 1-64 letters, digits, - or _, or
repeats an earlier document's, is not imported; it is listed and the exit
status is 3.

See docs/migration.md.
`

const exportUsage = `usage: quarry export --to DIR [--format dashboard|mongo] [server options]

Writes every class of the data file named by databaseURI into DIR, one file
per class. Works while a server runs on the file (it exports a snapshot).
  dashboard  <Class>.json as Parse Dashboard exports it: {"results": [...]}
             in REST form, without password hashes or relation members
  mongo      mongoexport's shape of a Parse Server database: <Class>.json,
             _SCHEMA.json and _Join:<key>:<Class>.json, one document per
             line; complete, and what 'quarry import' and mongoimport read
See docs/migration.md.
`

const backupUsage = `usage: quarry backup --out FILE [server options]

Copies the data file named by databaseURI (and its uploaded files,
<file>.files) into FILE while the server keeps serving. The copy is a
consistent snapshot: every write acknowledged before the backup started is
in it. Restore it with 'quarry restore'. See docs/migration.md.
`

const restoreUsage = `usage: quarry restore --from FILE [server options]

Copies a backup made by 'quarry backup' into the data file named by
databaseURI, which must be new (or empty) and not in use by a server.
See docs/migration.md.
`

// transferCommands are the subcommands of this file, by name.
var transferCommands = map[string]func(args, env []string, out, errOut io.Writer) int{
	"import":  runImport,
	"export":  runExport,
	"backup":  runBackup,
	"restore": runRestore,
}

// commandFlags takes the named flags (name -> takes a value) out of args;
// the rest are server options. help is set for -h, -help or --help.
func commandFlags(args []string, names map[string]bool) (flags map[string]string, rest []string, help bool, err error) {
	flags = map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-h" || a == "-help" || a == "--help" {
			return nil, nil, true, nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, known := names[name]
		if !strings.HasPrefix(a, "-") || !known {
			rest = append(rest, a)
			continue
		}
		if !takesValue {
			flags[name] = "true"
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, nil, false, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		flags[name] = value
	}
	return flags, rest, false, nil
}

// commandSetup parses a subcommand's flags and the server options; code
// is >= 0 when the command is over (help shown, or a usage error).
func commandSetup(name, usage string, args, env []string, names map[string]bool, required []string, out, errOut io.Writer) (map[string]string, string, int) {
	flags, _, path, code := commandSetupOptions(name, usage, args, env, names, required, out, errOut)
	return flags, path, code
}

// commandSetupOptions is commandSetup that also returns the server options.
func commandSetupOptions(name, usage string, args, env []string, names map[string]bool, required []string, out, errOut io.Writer) (map[string]string, *config.Options, string, int) {
	flags, rest, help, err := commandFlags(args, names)
	if help {
		fmt.Fprint(out, usage)
		return nil, nil, "", 0
	}
	if err == nil {
		for _, r := range required {
			if flags[r] == "" {
				err = fmt.Errorf("--%s is required", r)
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintf(errOut, "quarry %s: %v\n%s", name, err, usage)
		return nil, nil, "", 2
	}
	opts, _, err := config.Load(rest, env)
	if errors.Is(err, config.ErrHelp) {
		fmt.Fprint(out, usage)
		return nil, nil, "", 0
	}
	if err != nil {
		fmt.Fprintf(errOut, "quarry %s: %v\n", name, err)
		return nil, nil, "", 2
	}
	path, ok := store.FilePath(opts.DatabaseURI)
	if !ok {
		fmt.Fprintf(errOut, "quarry %s: databaseURI must name a data file (a database in memory or another backend cannot be used here)\n", name)
		return nil, nil, "", 2
	}
	return flags, opts, path, -1
}

// openTarget opens the data file, saying clearly when a server has it.
func openTarget(name, path string, errOut io.Writer) (store.Adapter, bool) {
	st, err := store.Open(path)
	if errors.Is(err, store.ErrLocked) {
		fmt.Fprintf(errOut, "quarry %s: %s is in use by a running server: stop it first, or use another data file\n", name, path)
		return nil, false
	}
	if err != nil {
		fmt.Fprintf(errOut, "quarry %s: %v\n", name, err)
		return nil, false
	}
	return st, true
}

func runImport(args, env []string, out, errOut io.Writer) int {
	flags, serverOpts, path, code := commandSetupOptions("import", importUsage, args, env,
		map[string]bool{"from": true, "resume": false, "batch": true, "progress": true, "filesFrom": true, "filesFromURL": true},
		[]string{"from"}, out, errOut)
	if code >= 0 {
		return code
	}
	batch := 0
	if b := flags["batch"]; b != "" {
		n, err := strconv.Atoi(b)
		if err != nil || n <= 0 {
			fmt.Fprintf(errOut, "quarry import: --batch must be a positive number\n")
			return 2
		}
		batch = n
	}
	mode := flags["progress"]
	if mode == "" || mode == "auto" {
		mode = "plain"
		if isTerminal(errOut) {
			mode = "bar"
		}
	}
	if !slices.Contains([]string{"bar", "plain", "none"}, mode) {
		fmt.Fprintf(errOut, "quarry import: --progress must be auto, bar, plain or none\n")
		return 2
	}
	st, ok := openTarget("import", path, errOut)
	if !ok {
		return 1
	}
	opts := transfer.ImportOptions{From: flags["from"], Checkpoint: path + ".import.json", Resume: flags["resume"] == "true", BatchSize: batch,
		FilesFrom: flags["filesFrom"], FilesFromURL: flags["filesFromURL"]}
	if opts.FilesFrom != "" || opts.FilesFromURL != "" {
		// The files go where the server will look for them: its
		// configured files adapter (filesSubDirectory, s3...).
		adapter, closeFiles, err := server.OpenFilesAdapter(serverOpts, newLogger(serverOpts))
		if err != nil {
			st.Close()
			fmt.Fprintf(errOut, "quarry import: files adapter: %v\n", err)
			return 1
		}
		defer closeFiles()
		opts.Files = adapter
	}
	pp := transfer.NewProgressPrinter(errOut, mode == "bar")
	if mode != "none" {
		opts.Progress = pp.Update
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := transfer.Import(ctx, st, opts)
	pp.Finish()
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if sum != nil {
		printSummary(out, sum)
	}
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(errOut, "quarry import: interrupted; run the same command with --resume to continue\n")
		return 130
	case err != nil:
		fmt.Fprintf(errOut, "quarry import: %v\n", err)
		if errors.Is(err, transfer.ErrNotEmpty) || errors.Is(err, transfer.ErrCheckpoint) || errors.Is(err, transfer.ErrFilesOptions) {
			return 2
		}
		fmt.Fprintf(errOut, "quarry import: what was committed is kept; fix the cause and run the same command with --resume\n")
		return 1
	case sum != nil && sum.Rejected > 0:
		fmt.Fprintf(errOut, "quarry import: %d documents were not imported: their objectId is not Parse-shaped or repeats an earlier document's (listed above); everything else is imported\n", sum.Rejected)
		return exitRejected
	}
	return 0
}

// exitRejected is import's exit status when it finished but refused
// documents for their objectIds: scripts must not take it for a clean run.
const exitRejected = 3

// printSummary writes what an import did: objects by class, then
// everything skipped or dropped with its reason.
func printSummary(w io.Writer, s *transfer.Summary) {
	total := s.Total()
	rate := 0.0
	if sec := s.Elapsed.Seconds(); sec > 0 {
		rate = float64(total) / sec
	}
	fmt.Fprintf(w, "imported %d objects, %d relation members, %d schemas, %d legacy sessions in %s (%.0f objects/s)\n",
		total, s.Relations, s.Schemas, s.Sessions, s.Elapsed.Round(time.Millisecond), rate)
	if s.Files > 0 {
		fmt.Fprintf(w, "copied the bytes of %d files\n", s.Files)
	}
	for _, c := range sortedKeys(s.Objects) {
		fmt.Fprintf(w, "  %-24s %d\n", c, s.Objects[c])
	}
	if len(s.Skipped) > 0 {
		fmt.Fprintf(w, "skipped documents:\n")
		for _, r := range sortedKeys(s.Skipped) {
			fmt.Fprintf(w, "  %6d  %s\n", s.Skipped[r], r)
		}
	}
	if len(s.Dropped) > 0 {
		fmt.Fprintf(w, "dropped fields:\n")
		for _, r := range sortedKeys(s.Dropped) {
			fmt.Fprintf(w, "  %6d  %s\n", s.Dropped[r], r)
		}
	}
	if s.Rejected > 0 {
		fmt.Fprintf(w, "rejected documents (objectId):\n")
		for _, d := range s.RejectedDocs {
			fmt.Fprintf(w, "  %s\n", d)
		}
		if more := s.Rejected - int64(len(s.RejectedDocs)); more > 0 {
			fmt.Fprintf(w, "  ... and %d more\n", more)
		}
	}
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func runExport(args, env []string, out, errOut io.Writer) int {
	flags, path, code := commandSetup("export", exportUsage, args, env,
		map[string]bool{"to": true, "format": true}, []string{"to"}, out, errOut)
	if code >= 0 {
		return code
	}
	format := transfer.FormatDashboard
	switch flags["format"] {
	case "", "dashboard":
	case "mongo", "mongoexport":
		format = transfer.FormatMongoLines
	default:
		fmt.Fprintf(errOut, "quarry export: --format must be dashboard or mongo\n%s", exportUsage)
		return 2
	}
	// Export a snapshot, so that a running server need not stop.
	tmp, err := os.MkdirTemp(filepath.Dir(path), ".quarry-export-")
	if err != nil {
		fmt.Fprintf(errOut, "quarry export: %v\n", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, "snapshot.db")
	if _, err := transfer.SnapshotData(path, snap); err != nil {
		fmt.Fprintf(errOut, "quarry export: %v\n", err)
		return 1
	}
	st, ok := openTarget("export", snap, errOut)
	if !ok {
		return 1
	}
	defer st.Close()
	sum, err := transfer.Export(st, flags["to"], format)
	if err != nil {
		fmt.Fprintf(errOut, "quarry export: %v\n", err)
		return 1
	}
	var total int64
	for _, n := range sum.Objects {
		total += n
	}
	fmt.Fprintf(out, "exported %d objects of %d classes into %s (%s)\n", total, len(sum.Objects), flags["to"], format)
	return 0
}

func runBackup(args, env []string, out, errOut io.Writer) int {
	flags, path, code := commandSetup("backup", backupUsage, args, env, map[string]bool{"out": true}, []string{"out"}, out, errOut)
	if code >= 0 {
		return code
	}
	info, err := transfer.Snapshot(path, flags["out"])
	if err != nil {
		fmt.Fprintf(errOut, "quarry backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(out, "backed up %d records (%d bytes) and %d uploaded files into %s\n", info.Records, info.Bytes, info.Files, flags["out"])
	return 0
}

func runRestore(args, env []string, out, errOut io.Writer) int {
	flags, path, code := commandSetup("restore", restoreUsage, args, env, map[string]bool{"from": true}, []string{"from"}, out, errOut)
	if code >= 0 {
		return code
	}
	info, err := transfer.Restore(flags["from"], path)
	if errors.Is(err, store.ErrLocked) {
		fmt.Fprintf(errOut, "quarry restore: %s is in use by a running server: stop it first, or restore into another data file\n", path)
		return 1
	}
	if err != nil {
		fmt.Fprintf(errOut, "quarry restore: %v\n", err)
		return 1
	}
	fmt.Fprintf(out, "restored %d records and %d uploaded files into %s\n", info.Records, info.Files, path)
	return 0
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
