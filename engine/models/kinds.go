package models

import (
	"os"
	"slices"
	"sync"
)

// A Kind is a kind of model defined outside engine, such as the lesson's
// bigram table (package toy), which Open opens like the built-in kinds. The
// package that defines it registers it from its init function, so engine
// never imports what sits above it.
type Kind struct {
	Name string // a short name for errors: "toy"
	// Names are the model names that mean this kind without a file: "toy".
	Names []string
	// File reports whether a file (never a folder) holds a model of this
	// kind, from its name alone: a toy table is a .json file.
	File func(path string) bool
	// Open opens a model of this kind by name or file.
	Open func(spec string) (*Loaded, error)
}

// kinds are the registered kinds, in registration order. They are set by
// init functions and read afterwards.
var kinds struct {
	sync.RWMutex
	list []Kind
}

// Register makes Open and Locate accept models of kind k. It panics when k
// lacks Open or a kind of that name is registered already: both are
// programming errors found at start-up.
func Register(k Kind) {
	if k.Open == nil || k.Name == "" {
		panic("models: Register: a kind needs a name and Open")
	}
	kinds.Lock()
	defer kinds.Unlock()
	if slices.ContainsFunc(kinds.list, func(o Kind) bool { return o.Name == k.Name }) {
		panic("models: Register: kind " + k.Name + " registered twice")
	}
	kinds.list = append(kinds.list, k)
}

// kindFor returns the registered kind that spec names or whose file spec
// is, if any.
func kindFor(spec string) (Kind, bool) {
	kinds.RLock()
	defer kinds.RUnlock()
	for _, k := range kinds.list {
		if slices.Contains(k.Names, spec) {
			return k, true
		}
	}
	for _, k := range kinds.list {
		if k.File == nil {
			continue
		}
		if st, err := os.Stat(spec); err == nil && !st.IsDir() && k.File(spec) {
			return k, true
		}
	}
	return Kind{}, false
}
