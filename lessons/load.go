package lessons

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sync"
)

// data holds the lessons (lessons/*.json, one lesson per file, in file-name
// order) and the page's wording (ui.json).
//
//go:embed data
var data embed.FS

// loadOnce parses the embedded lessons the first time Load is called.
var loadOnce = sync.OnceValues(func() (*Catalog, error) {
	sub, err := fs.Sub(data, "data")
	if err != nil {
		return nil, err
	}
	return Parse(sub)
})

// Load returns tracer's lessons, parsed and validated once from the files
// embedded in the package. The catalog is shared by every caller: treat it
// as read-only. An error means the embedded lessons are broken, which the
// package's tests catch before a release.
func Load() (*Catalog, error) {
	return loadOnce()
}

// Parse reads a catalog from a file system laid out as the package's data
// folder: ui.json, and lessons/*.json in file-name order, and validates it.
// Fields the format does not know are errors, so a misspelt key fails here
// rather than vanishing.
func Parse(fsys fs.FS) (*Catalog, error) {
	c := &Catalog{}
	var ui struct {
		Strings   Strings    `json:"strings"`
		Downloads []Download `json:"downloads"`
	}
	if err := decodeFile(fsys, "ui.json", &ui); err != nil {
		return nil, err
	}
	c.UI, c.Downloads = ui.Strings, ui.Downloads
	names, err := fs.Glob(fsys, "lessons/*.json")
	if err != nil {
		return nil, err
	}
	for _, name := range names { // Glob sorts them
		var l Lesson
		if err := decodeFile(fsys, name, &l); err != nil {
			return nil, err
		}
		c.Lessons = append(c.Lessons, l)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("lessons: %w", err)
	}
	return c, nil
}

// decodeFile decodes one JSON file strictly into v.
func decodeFile(fsys fs.FS, name string, v any) error {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("lessons: %w", err)
	}
	if err := DecodeStrict(path.Clean(name), raw, v); err != nil {
		return fmt.Errorf("lessons: %w", err)
	}
	return nil
}

// DecodeStrict decodes the JSON file name (its bytes raw) into v as the
// lessons' own files are read: a key named twice in one object, a field v
// does not know, or text after the value is an error that names the file
// and the line. web reads its wording (web/words/data/words.json) with it.
func DecodeStrict(name string, raw []byte, v any) error {
	if err := noDuplicateKeys(raw); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", name, describe(raw, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: text after the JSON value", name)
	}
	return nil
}

// noDuplicateKeys fails on an object that names a key twice: decoding
// would keep the last silently, so an edit to the first copy would be lost.
// Syntax errors are left to the decoder, which says where they are.
func noDuplicateKeys(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type object struct {
		keys  map[string]bool
		isKey bool // the next token is a key
	}
	var stack []*object
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.isKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key, _ := tok.(string)
			if top.keys[key] {
				line := 1 + bytes.Count(raw[:min(int(dec.InputOffset()), len(raw))], []byte("\n"))
				return fmt.Errorf("line %d: key %q appears twice in one object: keep one", line, key)
			}
			top.keys[key] = true
			top.isKey = false
			continue
		}
		if top != nil {
			top.isKey = true // a value was read; a key or '}' follows
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{keys: map[string]bool{}, isKey: true})
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim(']'), json.Delim('}'):
			stack = stack[:len(stack)-1]
		}
	}
}

// describe adds the line of a JSON syntax or type error.
func describe(raw []byte, err error) error {
	var offset int64
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	default:
		return err
	}
	line := 1 + bytes.Count(raw[:min(int(offset), len(raw))], []byte("\n"))
	return fmt.Errorf("line %d: %w", line, err)
}
