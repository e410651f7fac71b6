package store

// FilePath returns the file a database URI keeps its data in, and false
// for MemoryURI or a URI Open would refuse. Beside-the-database data
// (uploaded files) is placed from it.
func FilePath(uri string) (string, bool) {
	path, err := parseURI(uri)
	if err != nil || path == MemoryURI {
		return "", false
	}
	return path, true
}
