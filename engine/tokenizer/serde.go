package tokenizer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// This file decodes tokenizer.json the way Hugging Face's serde structs
// read it, where Go's encoding/json differs: serde matches object keys
// exactly (encoding/json also takes "Post_Processor" for post_processor),
// ignores keys it does not know (no struct there denies unknown fields), and
// refuses an object that lacks a field with no default. So a misspelled
// optional key is ignored, as in Hugging Face, and a misspelled required
// one makes the file fail to load, as there.

// decodeExact decodes data into v (a pointer) like json.Unmarshal, except
// that the keys of objects decoded into structs must match the fields' json
// names exactly; other keys are ignored.
func decodeExact(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("decodeExact: want a non-nil pointer")
	}
	return decodeValue(data, rv.Elem())
}

func decodeValue(data []byte, v reflect.Value) error {
	if !holdsStruct(v.Type(), 0) {
		return json.Unmarshal(data, v.Addr().Interface())
	}
	null := isNull(data)
	switch v.Kind() {
	case reflect.Pointer:
		if null {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := decodeValue(data, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Slice:
		if null {
			v.SetZero()
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return err
		}
		s := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, item := range items {
			if err := decodeValue(item, s.Index(i)); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			break // only string keys are read here; json.Unmarshal has the rest
		}
		if null {
			v.SetZero()
			return nil
		}
		var items map[string]json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return err
		}
		m := reflect.MakeMapWithSize(v.Type(), len(items))
		for k, item := range items {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := decodeValue(item, e); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
		return nil
	case reflect.Struct:
		if null {
			return nil // as encoding/json: null leaves a struct alone
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		t := v.Type()
		for i := range t.NumField() {
			name := jsonName(t.Field(i))
			raw, ok := obj[name]
			if name == "" || !ok {
				continue
			}
			if err := decodeValue(raw, v.Field(i)); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	return json.Unmarshal(data, v.Addr().Interface())
}

// holdsStruct reports whether values of t contain a struct whose keys
// decodeValue must match itself.
func holdsStruct(t reflect.Type, depth int) bool {
	if depth > 8 || t == reflect.TypeFor[json.RawMessage]() {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return holdsStruct(t.Elem(), depth+1)
	}
	return false
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// requireFields checks that the object raw has every key in fields, spelled
// exactly: serde's "missing field" error.
func requireFields(raw []byte, what string, fields ...string) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if obj == nil {
		return fmt.Errorf("%s: want an object, not null", what)
	}
	for _, f := range fields {
		if _, ok := obj[f]; ok {
			continue
		}
		for k := range obj {
			if strings.EqualFold(k, f) {
				return fmt.Errorf("%s: missing field %q (keys are case-sensitive; the file has %q)", what, f, k)
			}
		}
		return fmt.Errorf("%s: missing field %q", what, f)
	}
	return nil
}

// componentFields are the fields Hugging Face's struct for a normalizer,
// pre-tokenizer, decoder or post-processor of type typ has without a
// default; a file that lacks one does not load there.
func componentFields(what, typ string) []string {
	byteLevel := []string{"add_prefix_space", "trim_offsets"}
	switch what + " " + typ {
	case "normalizer Prepend":
		return []string{"prepend"}
	case "normalizer Replace", "decoder Replace":
		return []string{"pattern", "content"}
	case "normalizer Sequence":
		return []string{"normalizers"}
	case "pre_tokenizer ByteLevel", "decoder ByteLevel", "post_processor ByteLevel":
		return byteLevel
	case "pre_tokenizer Split":
		return []string{"pattern", "behavior", "invert"}
	case "pre_tokenizer Digits":
		return []string{"individual_digits"}
	case "pre_tokenizer Metaspace", "decoder Metaspace":
		return []string{"replacement"}
	case "pre_tokenizer Sequence":
		return []string{"pretokenizers"}
	case "decoder Strip":
		return []string{"content", "start", "stop"}
	case "decoder Sequence":
		return []string{"decoders"}
	case "post_processor TemplateProcessing":
		return []string{"single", "pair", "special_tokens"}
	case "post_processor RobertaProcessing":
		return []string{"sep", "cls", "trim_offsets", "add_prefix_space"}
	case "post_processor BertProcessing":
		return []string{"sep", "cls"}
	case "post_processor Sequence":
		return []string{"processors"}
	}
	return nil
}

// addedTokenFields are AddedToken's fields (all without a default) and the
// id beside them.
func addedTokenFields() []string {
	return []string{"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"}
}
