//go:build unix

package doctest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureListsEveryPackage: the package list at the top of
// docs/architecture.md (its first code block, one package per line) names
// every Go package of the module, and nothing that is not one.
func TestArchitectureListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no code block")
	}
	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			listed = append(listed, strings.TrimSuffix(f[0], "/"))
		}
	}

	var pkgs []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel := filepath.ToSlash(rel); rel != "." && !slices.Contains(pkgs, rel) {
			pkgs = append(pkgs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if !slices.Contains(listed, p) {
			t.Errorf("package %s is not in docs/architecture.md's list", p)
		}
	}
	for _, l := range listed {
		if !slices.Contains(pkgs, l) {
			t.Errorf("docs/architecture.md lists %s, which is not a package of the module", l)
		}
	}
}
