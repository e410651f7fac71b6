package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/quarrydata/quarry/config"
	"github.com/quarrydata/quarry/files"
	"github.com/quarrydata/quarry/store"
)

const rotateUsage = `usage: quarry files rotate-key [--oldKey KEY] [--names a.txt,b.png] [server options]

Re-seals the local files adapter's files: files encrypted with --oldKey (or
stored in plaintext) are rewritten encrypted with the configured
encryptionKey, or in plaintext when no encryptionKey is set. Without
--names every file is rotated. The directory comes from filesSubDirectory
or databaseURI, as for the server; restart the server with the new key.
`

// runFiles runs `quarry files <command>`.
func runFiles(args, env []string, out, errOut io.Writer) int {
	if len(args) == 0 || args[0] != "rotate-key" {
		fmt.Fprint(errOut, rotateUsage)
		return 2
	}
	oldKey, names, rest, err := rotateFlags(args[1:])
	if err != nil {
		fmt.Fprintf(errOut, "quarry files rotate-key: %v\n%s", err, rotateUsage)
		return 2
	}
	opts, _, err := config.Load(rest, env)
	if errors.Is(err, config.ErrHelp) {
		fmt.Fprint(out, rotateUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(errOut, "quarry files rotate-key: %v\n", err)
		return 2
	}
	if opts.Files.Adapter != config.FilesAdapterLocal {
		fmt.Fprintf(errOut, "quarry files rotate-key: only the local files adapter is encrypted by Quarry\n")
		return 2
	}
	dir := opts.Files.Directory
	if dir == "" {
		path, ok := store.FilePath(opts.DatabaseURI)
		if !ok {
			fmt.Fprintf(errOut, "quarry files rotate-key: a database in memory keeps no files\n")
			return 2
		}
		dir = path + ".files"
	}
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(errOut, "quarry files rotate-key: %v\n", err)
		return 1
	}
	done, err := files.RotateKey(dir, oldKey, opts.Files.EncryptionKey, names)
	fmt.Fprintf(out, "rotated %d file(s) in %s\n", len(done), dir)
	if err != nil {
		fmt.Fprintf(errOut, "quarry files rotate-key: %v\n", err)
		return 1
	}
	return 0
}

// rotateFlags takes --oldKey and --names out of args; the rest are server
// options.
func rotateFlags(args []string) (oldKey string, names, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "--") || name != "oldKey" && name != "names" {
			rest = append(rest, args[i])
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return "", nil, nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			value = args[i]
		}
		if name == "oldKey" {
			oldKey = value
		} else {
			names = append(names, strings.Split(value, ",")...)
		}
	}
	return oldKey, names, rest, nil
}
