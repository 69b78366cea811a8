package sandbox

import (
	"debug/elf"
	"fmt"
)

// builtinAllocator names the allocator linked into the server binary at
// path, "" when it has none: a binary that exports malloc itself (MariaDB
// 10.1's builds with jemalloc linked in statically) keeps using its own,
// since the executable's symbols come before a preloaded library's. A
// preloaded allocator then does not replace it: tcmalloc is silently
// unused, and jemalloc (two jemallocs in one process) crashes the server
// at start.
func builtinAllocator(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return ""
	}
	defined := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			defined[s.Name] = true
		}
	}
	switch {
	case !defined["malloc"] || !defined["free"]:
		return ""
	case defined["mallocx"] || defined["je_malloc"]:
		return "jemalloc"
	case defined["tc_malloc"]:
		return "tcmalloc"
	}
	return "an allocator"
}

// checkPreload refuses an allocator to preload into a server that has one
// built in (builtinAllocator).
func checkPreload(name, allocator string, b Binary) error {
	if allocator == "" {
		return nil
	}
	built := builtinAllocator(b.Server)
	if built == "" {
		return nil
	}
	return fmt.Errorf("%w: sandbox %q: allocator %s: %s %s (%s) has %s linked in (it defines malloc and free itself), which a preloaded allocator does not replace: start it without an allocator (its own is then in use)",
		ErrInvalidSpec, name, allocator, b.Flavor, b.Version, b.Server, built)
}
