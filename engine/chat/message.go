package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Message is one turn of a conversation, as in transformers'
// apply_chat_template: a role, its content, and any other keys a template
// may read (tool_calls, tool_call_id, name, reasoning_content, ...).
//
// Templates see a message as a dict whose keys are "role", "content" and
// then the members of Extra in order. A member of Extra named "role" or
// "content" replaces the field of that name, which is how content that is
// not a plain string (null, or a list of parts) is written.
type Message struct {
	Role    string
	Content string
	Extra   Object
}

// Object is a JSON object that keeps its keys in order, as Python dicts do.
// The order matters: tojson prints keys in the order given (tool schemas,
// tool-call arguments), so a Go map, whose keys are printed sorted, is not
// the same input.
//
// Values are what encoding/json decodes, with Object for nested objects and
// int64 for integral numbers: nil, bool, string, int64, float64, []any,
// Object. Values of other Go types are accepted when rendering and converted
// through their JSON encoding.
type Object []Member

// Member is one key and value of an Object.
type Member struct {
	Key   string
	Value any
}

// Get returns the value of key and whether the object has it.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the object with its keys in order.
func (o Object) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("{}"), nil
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		buf.Write(key)
		buf.WriteByte(':')
		value, err := json.Marshal(m.Value)
		if err != nil {
			return nil, fmt.Errorf("chat: key %q: %w", m.Key, err)
		}
		buf.Write(value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a JSON object keeping its keys in order; nested
// objects become Objects and integral numbers int64.
func (o *Object) UnmarshalJSON(data []byte) error {
	v, err := DecodeJSON(data)
	if err != nil {
		return err
	}
	obj, ok := v.(Object)
	if !ok {
		return fmt.Errorf("chat: want a JSON object, got %s", jsonKind(v))
	}
	*o = obj
	return nil
}

// MarshalJSON writes the message as a JSON object: role, content, then the
// members of Extra (which replace role or content when they name them).
func (m Message) MarshalJSON() ([]byte, error) {
	return json.Marshal(m.object())
}

// UnmarshalJSON reads a message object such as
// {"role": "user", "content": "Hi"}. Keys other than role and content, and
// a content that is not a string, go to Extra in their order.
func (m *Message) UnmarshalJSON(data []byte) error {
	var obj Object
	if err := obj.UnmarshalJSON(data); err != nil {
		return fmt.Errorf("chat: message: %w", err)
	}
	*m = Message{}
	for _, mem := range obj {
		switch s, isString := mem.Value.(string); {
		case mem.Key == "role" && isString:
			m.Role = s
		case mem.Key == "role":
			return fmt.Errorf("chat: message role must be a string, got %s", jsonKind(mem.Value))
		case mem.Key == "content" && isString:
			m.Content = s
		default:
			m.Extra = append(m.Extra, mem)
		}
	}
	return nil
}

// object is the message as templates see it.
func (m Message) object() Object {
	obj := make(Object, 0, 2+len(m.Extra))
	role, content := any(m.Role), any(m.Content)
	if v, ok := m.Extra.Get("role"); ok {
		role = v
	}
	if v, ok := m.Extra.Get("content"); ok {
		content = v
	}
	obj = append(obj, Member{"role", role}, Member{"content", content})
	for _, mem := range m.Extra {
		if mem.Key != "role" && mem.Key != "content" {
			obj = append(obj, mem)
		}
	}
	return obj
}

// DecodeJSON decodes one JSON value keeping object key order: objects become
// Object, arrays []any, integral numbers int64 (float64 when they do not
// fit), other numbers float64. Use it for tools or extra template variables
// read from files, where key order shows in the rendered prompt.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("chat: decode JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("chat: decode JSON: data after the first value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := Object{}
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return nil, err
				}
				value, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				obj = append(obj, Member{keyTok.(string), value})
			}
			_, err := dec.Token() // '}'
			return obj, err
		case '[':
			list := []any{}
			for dec.More() {
				value, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, value)
			}
			_, err := dec.Token() // ']'
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return decodeNumber(t), nil
	default: // nil, bool, string
		return t, nil
	}
}

// decodeNumber keeps integers integral, as Python's json.loads does, so that
// tojson prints 22 and not 22.0.
func decodeNumber(n json.Number) any {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	f, _ := strconv.ParseFloat(s, 64) // json.Decoder validated the syntax
	return f
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case []any:
		return "an array"
	case Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
