package walk

import (
	"io/fs"
	"sort"
	"strings"
)

// PathMap is a file system that reads the paths the legacy configuration
// names at other places: orderly may run where the backend's document
// root is mounted elsewhere (legacy.path_map). Each key is a directory
// prefix as the configuration names it, each value where orderly reads
// it; the longest matching prefix wins.
type PathMap struct {
	FS    FS
	pairs [][2]string // longest prefix first
}

// NewPathMap returns fsys with paths under each key of m read under its
// value instead.
func NewPathMap(fsys FS, m map[string]string) *PathMap {
	p := &PathMap{FS: fsys}
	for k, v := range m {
		p.pairs = append(p.pairs, [2]string{strings.TrimSuffix(k, "/"), strings.TrimSuffix(v, "/")})
	}
	sort.Slice(p.pairs, func(i, j int) bool { return len(p.pairs[i][0]) > len(p.pairs[j][0]) })
	return p
}

// Map returns where orderly reads name.
func (p *PathMap) Map(name string) string {
	for _, kv := range p.pairs {
		if name == kv[0] || strings.HasPrefix(name, kv[0]+"/") {
			return kv[1] + name[len(kv[0]):]
		}
	}
	return name
}

func (p *PathMap) Stat(name string) (fs.FileInfo, error)  { return p.FS.Stat(p.Map(name)) }
func (p *PathMap) Lstat(name string) (fs.FileInfo, error) { return p.FS.Lstat(p.Map(name)) }
func (p *PathMap) ReadFile(name string) ([]byte, error)   { return p.FS.ReadFile(p.Map(name)) }
