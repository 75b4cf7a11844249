package chat

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/nikolalohinski/gonja/v2/exec"
)

// none is Python's None inside templates. A nil *none is "defined but null":
// gonja treats it as nil (falsy, prints ""), while our `defined` test can
// tell it from a missing key, as Jinja does.
type none struct{}

var noneValue = (*none)(nil)

// maxValueDepth bounds the nesting of data converted for, or printed by,
// a template. Python's json.dumps stops at about 1000 (RecursionError).
const maxValueDepth = 512

// templateValue converts Go data into what gonja templates read: strings,
// bools, ints, float64s, []any, *exec.Dict (ordered dicts) and none.
// Objects and Messages keep their key order; Go maps are ordered by key;
// other types go through their JSON encoding.
func templateValue(v any) (any, error) {
	return convert(v, 0)
}

func convert(v any, depth int) (any, error) {
	if depth > maxValueDepth {
		return nil, fmt.Errorf("data nested deeper than %d levels", maxValueDepth)
	}
	switch x := v.(type) {
	case nil:
		return noneValue, nil
	case string, bool, float64:
		return x, nil
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case float32:
		return float64(x), nil
	case json.Number:
		return convert(decodeNumber(x), depth)
	case json.RawMessage:
		decoded, err := DecodeJSON(x)
		if err != nil {
			return nil, err
		}
		return convert(decoded, depth)
	case Object:
		return convertObject(x, depth)
	case Message:
		return convertObject(x.object(), depth)
	case *Message:
		if x == nil {
			return noneValue, nil
		}
		return convertObject(x.object(), depth)
	case []any:
		list := make([]any, len(x))
		for i, item := range x {
			c, err := convert(item, depth+1)
			if err != nil {
				return nil, err
			}
			list[i] = c
		}
		return list, nil
	}
	return convertReflect(reflect.ValueOf(v), depth)
}

// convertObject makes an ordered dict. An empty object becomes an empty Go
// map instead: gonja counts every *exec.Dict as true, Python an empty dict
// as false.
func convertObject(obj Object, depth int) (any, error) {
	if len(obj) == 0 {
		return map[string]any{}, nil
	}
	dict := &exec.Dict{Pairs: make([]*exec.Pair, 0, len(obj))}
	for _, m := range obj {
		c, err := convert(m.Value, depth+1)
		if err != nil {
			return nil, err
		}
		dict.Pairs = append(dict.Pairs, &exec.Pair{Key: exec.AsValue(m.Key), Value: exec.AsValue(c)})
	}
	return dict, nil
}

// convertReflect handles the other Go kinds: integers, slices, string-keyed
// maps (keys sorted), and anything else through encoding/json.
func convertReflect(rv reflect.Value, depth int) (any, error) {
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if rv.Uint() > math.MaxInt64 {
			return float64(rv.Uint()), nil
		}
		return int(rv.Uint()), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return noneValue, nil
		}
		if _, ok := rv.Interface().(json.Marshaler); !ok {
			return convert(rv.Elem().Interface(), depth)
		}
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return noneValue, nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			break // []byte: JSON encodes it as base64, as json.Marshal would
		}
		list := make([]any, rv.Len())
		for i := range list {
			c, err := convert(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			list[i] = c
		}
		return list, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		if rv.IsNil() {
			return noneValue, nil
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		obj := make(Object, len(keys))
		for i, k := range keys {
			obj[i] = Member{k, rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface()}
		}
		return convertObject(obj, depth)
	}
	data, err := json.Marshal(rv.Interface())
	if err != nil {
		return nil, fmt.Errorf("cannot pass %s to a template: %w", rv.Type(), err)
	}
	decoded, err := DecodeJSON(data)
	if err != nil {
		return nil, err
	}
	return convert(decoded, depth)
}

// jsonOptions are tojson's keyword arguments, as in transformers'
// override: json.dumps(x, ensure_ascii=False, indent=None, separators=None,
// sort_keys=False).
type jsonOptions struct {
	ensureASCII bool
	indent      string // "" with hasIndent: newlines without indentation
	hasIndent   bool
	itemSep     string
	keySep      string
	sortKeys    bool
}

// writeJSON writes v as Python's json.dumps does, into b, which stops at
// the budget.
func writeJSON(b *textBuilder, v *exec.Value, opts jsonOptions, depth int) error {
	if b.over {
		return nil // past the budget: finish reports it
	}
	if depth > maxValueDepth {
		return fmt.Errorf("tojson: data nested deeper than %d levels", maxValueDepth)
	}
	switch {
	case v == nil || v.IsNil():
		b.WriteString("null")
	case v.IsError():
		return v
	case v.IsBool():
		if v.Bool() {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case v.IsInteger():
		b.WriteString(strconv.Itoa(v.Integer()))
	case v.IsFloat():
		b.WriteString(pyFloatJSON(v.Float()))
	case v.IsString():
		writeJSONString(b, v.String(), opts.ensureASCII)
	case v.IsList():
		items := itemsOf(v)
		return writeJSONList(b, v.Len(), opts, depth, func(i int) error {
			if x, ok := items.item(i); ok {
				return writeJSONOf(b, x, opts, depth+1)
			}
			return writeJSON(b, v.Index(i), opts, depth+1)
		})
	case v.IsDict():
		if _, ok := v.Interface().(namespace); ok {
			return fmt.Errorf("tojson: Object of type Namespace is not JSON serializable")
		}
		return writeJSONDict(b, v, opts, depth)
	default:
		return fmt.Errorf("tojson: Object of type %T is not JSON serializable", v.Interface())
	}
	return nil
}

// writeJSONList writes a list of n items, item(i) writing item i.
func writeJSONList(b *textBuilder, n int, opts jsonOptions, depth int, item func(i int) error) error {
	if n == 0 {
		b.WriteString("[]")
		return nil
	}
	b.WriteByte('[')
	for i := range n {
		if b.over {
			return nil
		}
		if i > 0 {
			b.WriteString(opts.itemSep)
		}
		writeNewline(b, opts, depth+1)
		if err := item(i); err != nil {
			return err
		}
	}
	writeNewline(b, opts, depth)
	b.WriteByte(']')
	return nil
}

// writeJSONItems writes a list held inside another list (a list literal, a
// tuple, a list made by an operator or filter), its items as they are,
// without wrapping the list in an *exec.Value.
func writeJSONItems[T any](b *textBuilder, items []T, opts jsonOptions, depth int) error {
	return writeJSONList(b, len(items), opts, depth, func(i int) error {
		return writeJSONOf(b, any(items[i]), opts, depth+1)
	})
}

// writeJSONOf writes one item of a list: strings, numbers, booleans, None
// and nested lists directly, anything else through writeJSON.
func writeJSONOf(b *textBuilder, item any, opts jsonOptions, depth int) error {
	if b.over {
		return nil
	}
	if depth > maxValueDepth {
		return fmt.Errorf("tojson: data nested deeper than %d levels", maxValueDepth)
	}
	switch x := item.(type) {
	case nil: // an undefined or None item, as writeJSON writes it
		b.WriteString("null")
	case string:
		writeJSONString(b, x, opts.ensureASCII)
	case int:
		b.WriteString(strconv.Itoa(x))
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		b.WriteString(pyFloatJSON(x))
	case *exec.Value:
		return writeJSON(b, x, opts, depth)
	case []any:
		return writeJSONItems(b, x, opts, depth)
	case tuple:
		return writeJSONItems(b, x, opts, depth)
	case exec.ValuesList:
		return writeJSONItems(b, x, opts, depth)
	case *exec.Dict:
		return writeJSONPairs(b, x, opts, depth)
	default:
		return writeJSON(b, exec.AsValue(x), opts, depth)
	}
	return nil
}

// jsonEntry is one key and value of a dict being written.
type jsonEntry struct {
	key   string
	value *exec.Value
}

// writeJSONDict writes a dict: gonja's ordered *exec.Dict (keys in
// insertion order) or a Go map (keys sorted, as gonja lists them).
func writeJSONDict(b *textBuilder, v *exec.Value, opts jsonOptions, depth int) error {
	if d, ok := v.Interface().(*exec.Dict); ok {
		return writeJSONPairs(b, d, opts, depth)
	}
	var entries []jsonEntry
	for _, k := range v.Keys() {
		key, err := jsonKey(k)
		if err != nil {
			return err
		}
		value, _ := v.GetItem(k.Interface())
		entries = append(entries, jsonEntry{key, value})
	}
	return writeJSONEntries(b, entries, opts, depth)
}

// writeJSONPairs writes an *exec.Dict, found in a list without a wrapper
// or inside one.
func writeJSONPairs(b *textBuilder, d *exec.Dict, opts jsonOptions, depth int) error {
	var entries []jsonEntry
	for _, p := range d.Pairs {
		key, err := jsonKey(p.Key)
		if err != nil {
			return err
		}
		entries = append(entries, jsonEntry{key, p.Value})
	}
	return writeJSONEntries(b, entries, opts, depth)
}

func writeJSONEntries(b *textBuilder, entries []jsonEntry, opts jsonOptions, depth int) error {
	if len(entries) == 0 {
		b.WriteString("{}")
		return nil
	}
	if opts.sortKeys {
		slices.SortStableFunc(entries, func(a, b jsonEntry) int { return strings.Compare(a.key, b.key) })
	}
	b.WriteByte('{')
	for i, e := range entries {
		if b.over {
			return nil
		}
		if i > 0 {
			b.WriteString(opts.itemSep)
		}
		writeNewline(b, opts, depth+1)
		writeJSONString(b, e.key, opts.ensureASCII)
		b.WriteString(opts.keySep)
		if err := writeJSON(b, e.value, opts, depth+1); err != nil {
			return err
		}
	}
	writeNewline(b, opts, depth)
	b.WriteByte('}')
	return nil
}

// jsonKey converts a dict key as json.dumps does: str as is, numbers, bools
// and None by their JSON spelling.
func jsonKey(k *exec.Value) (string, error) {
	switch {
	case k.IsString():
		return k.String(), nil
	case k.IsNil():
		return "null", nil
	case k.IsBool():
		if k.Bool() {
			return "true", nil
		}
		return "false", nil
	case k.IsInteger():
		return strconv.Itoa(k.Integer()), nil
	case k.IsFloat():
		return pyFloatJSON(k.Float()), nil
	}
	return "", fmt.Errorf("tojson: keys must be str, int, float, bool or None, not %T", k.Interface())
}

func writeNewline(b *textBuilder, opts jsonOptions, depth int) {
	if !opts.hasIndent {
		return
	}
	b.WriteByte('\n')
	for range depth {
		b.WriteString(opts.indent)
	}
}

// writeJSONString quotes s as json.dumps does: ", \ and control characters
// escaped (\n, \r, \t, \b, \f by name, others as \u00XX); with ensureASCII
// every non-ASCII character as \uXXXX (UTF-16 surrogate pairs above U+FFFF).
func writeJSONString(b *textBuilder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		case ensureASCII && r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// pyFloatJSON spells f as json.dumps does: float.__repr__, with NaN,
// Infinity and -Infinity for the non-finite values.
func pyFloatJSON(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return pyFloatRepr(f)
}

// pyFloatRepr spells a finite f as Python's repr does: the shortest digits
// that round-trip, in positional notation when the decimal exponent is in
// [-4, 16), otherwise as d.ddde±XX; positional values always show a
// fractional part ("1.0").
func pyFloatRepr(f float64) string {
	if math.IsNaN(f) {
		return "nan"
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "inf"
		}
		return "-inf"
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // value = 0.digits × 10^decpt
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		expSign := "+"
		if exp < 0 {
			expSign = "-"
			exp = -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, expSign, exp)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt < len(digits):
		return sign + digits[:decpt] + "." + digits[decpt:]
	default:
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	}
}
