package schema

import "testing"

// TestCompareAtIsCompareOfGet: CompareAt orders as Compare of Get's values,
// for timestamps, missing values, odd values and nested paths.
func TestCompareAtIsCompareOfGet(t *testing.T) {
	objs := []Object{
		{"createdAt": "2026-01-02T03:04:05.006Z", "updatedAt": "2026-01-02T03:04:05.006Z", "a": map[string]any{"b": 1.0}},
		{"createdAt": "2026-01-02T03:04:05.007Z", "updatedAt": "2025-01-02T03:04:05.006Z", "a": map[string]any{"b": 2.0}},
		{"createdAt": 3.0, "a": "x"},
		{"createdAt": Date("2026-01-02T03:04:05.006Z"), "updatedAt": nil},
		{},
	}
	for _, path := range []string{"createdAt", "updatedAt", "a", "a.b", "none"} {
		for _, x := range objs {
			for _, y := range objs {
				va, _ := Get(x, path)
				vb, _ := Get(y, path)
				if got, want := CompareAt(x, y, path), Compare(va, vb); got != want {
					t.Errorf("CompareAt(%v, %v, %q) = %d, want %d", x, y, path, got, want)
				}
			}
		}
	}
}
