// Command treemetrics prints the shape of dbarena's source tree, for the
// redesign's before-and-after (docs/design.md): non-test lines per
// top-level package folder, the longest functions, and the internal import
// graph's size, depth (the longest import chain) and the packages most
// imported. Run it from the repository root: go run ./scripts/treemetrics.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const module = "github.com/dbarena/dbarena/"

func main() {
	longest := flag.Int("longest", 100, "list functions of at least this many lines")
	flag.Parse()
	folders, funcs, err := scan("internal", *longest)
	if err != nil {
		fmt.Fprintln(os.Stderr, "treemetrics:", err)
		os.Exit(1)
	}
	fmt.Println("Non-test Go lines per folder of internal/:")
	names := sortedKeys(folders)
	sort.SliceStable(names, func(i, j int) bool { return folders[names[i]] > folders[names[j]] })
	total := 0
	for _, n := range names {
		fmt.Printf("  %6d  %s\n", folders[n], n)
		total += folders[n]
	}
	fmt.Printf("  %6d  in all, %d folders\n\n", total, len(names))

	fmt.Printf("Functions of %d lines or more:\n", *longest)
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].lines > funcs[j].lines })
	for _, f := range funcs {
		fmt.Printf("  %4d  %s %s\n", f.lines, f.file, f.name)
	}
	fmt.Println()

	if err := imports(); err != nil {
		fmt.Fprintln(os.Stderr, "treemetrics: import graph:", err)
		os.Exit(1)
	}
}

type function struct {
	file, name string
	lines      int
}

// scan counts non-test lines per top-level folder under root and lists the
// functions of at least longest lines.
func scan(root string, longest int) (map[string]int, []function, error) {
	folders := map[string]int{}
	var funcs []function
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		top := strings.SplitN(rel, string(filepath.Separator), 2)[0]
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		folders[top] += bytes.Count(b, []byte("\n"))
		f, err := parser.ParseFile(fset, path, b, 0)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n >= longest {
				funcs = append(funcs, function{path, fd.Name.Name, n})
			}
		}
		return nil
	})
	return folders, funcs, err
}

// imports prints the internal import graph's size and depth.
func imports() error {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "./...").Output()
	if err != nil {
		return err
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bufio.NewReader(bytes.NewReader(out)))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			return err
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		graph[name] = nil
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				graph[name] = append(graph[name], strings.TrimPrefix(imp, module))
			}
		}
	}
	depth := map[string]int{}
	var chain func(string) int
	chain = func(p string) int {
		if d, ok := depth[p]; ok {
			return d
		}
		depth[p] = 0 // Go forbids cycles
		d := 0
		for _, q := range graph[p] {
			d = max(d, chain(q)+1)
		}
		depth[p] = d
		return d
	}
	edges, deepest := 0, ""
	importers := map[string]int{}
	for p, qs := range graph {
		edges += len(qs)
		for _, q := range qs {
			importers[q]++
		}
		if deepest == "" || chain(p) > chain(deepest) || chain(p) == chain(deepest) && p < deepest {
			deepest = p
		}
	}
	fmt.Printf("Import graph: %d packages, %d internal imports, depth %d (from %s)\n", len(graph), edges, chain(deepest), deepest)
	path := []string{deepest}
	for p := deepest; depth[p] > 0; {
		for _, q := range graph[p] {
			if depth[q] == depth[p]-1 {
				p = q
				break
			}
		}
		path = append(path, p)
	}
	fmt.Printf("  the longest chain: %s\n", strings.Join(path, " -> "))
	most := sortedKeys(importers)
	sort.SliceStable(most, func(i, j int) bool { return importers[most[i]] > importers[most[j]] })
	fmt.Print("  most imported:")
	for _, p := range most[:min(8, len(most))] {
		fmt.Printf(" %s (%d)", p, importers[p])
	}
	fmt.Println()
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
