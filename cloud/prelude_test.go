package cloud

import (
	"slices"
	"testing"
)

// TestPreludePartsListed: every file in prelude/ is joined, none twice, so
// that a part added to the folder is not silently left out.
func TestPreludePartsListed(t *testing.T) {
	entries, err := preludeFS.ReadDir("prelude")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	listed := slices.Sorted(slices.Values(preludeParts))
	if !slices.Equal(files, listed) {
		t.Errorf("prelude/ holds %v, preludeParts lists %v", files, listed)
	}
}
