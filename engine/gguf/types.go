package gguf

import (
	"fmt"
	"sort"
)

// ValueType is the type of a metadata value. The Go type of KV.Value for
// each is given beside it; arrays hold typed slices of those ([]int32,
// []string, ...), arrays of arrays []any.
type ValueType uint32

// The metadata value types.
const (
	TypeUint8   ValueType = 0  // uint8
	TypeInt8    ValueType = 1  // int8
	TypeUint16  ValueType = 2  // uint16
	TypeInt16   ValueType = 3  // int16
	TypeUint32  ValueType = 4  // uint32
	TypeInt32   ValueType = 5  // int32
	TypeFloat32 ValueType = 6  // float32
	TypeBool    ValueType = 7  // bool
	TypeString  ValueType = 8  // string
	TypeArray   ValueType = 9  // a typed slice, or []any
	TypeUint64  ValueType = 10 // uint64
	TypeInt64   ValueType = 11 // int64
	TypeFloat64 ValueType = 12 // float64
)

var valueTypeNames = [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}

// String returns the type's name in gguf-py's spelling, lower case.
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("ValueType(%d)", uint32(t))
}

// minSize is the fewest bytes one value of the type takes (0: unknown).
func (t ValueType) minSize() uint64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64, TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return 0
}

// Type is a ggml tensor type.
type Type uint32

// The ggml tensor types tracer knows the size of. F32, F16, BF16, Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS
// can be computed with; the others are listed so that errors can name
// them.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	// The "i-quants": IQ4_NL and IQ4_XS are computed with (llama-quantize
	// gives IQ4_NL to rows that are not a multiple of 256 in Q2_K, Q3_K
	// and IQ4_XS files); the others need an importance matrix to make and
	// are listed so that errors can name them.
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
)

// typeInfo is a type's name, elements per block and bytes per block.
var typeInfo = map[Type]struct {
	name       string
	block, siz int
}{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2}, BF16: {"BF16", 1, 2}, F64: {"F64", 1, 8},
	I8: {"I8", 1, 1}, I16: {"I16", 1, 2}, I32: {"I32", 1, 4}, I64: {"I64", 1, 8},
	Q4_0: {"Q4_0", 32, 18}, Q4_1: {"Q4_1", 32, 20}, Q5_0: {"Q5_0", 32, 22}, Q5_1: {"Q5_1", 32, 24},
	Q8_0: {"Q8_0", 32, 34}, Q8_1: {"Q8_1", 32, 36},
	Q2_K: {"Q2_K", 256, 84}, Q3_K: {"Q3_K", 256, 110}, Q4_K: {"Q4_K", 256, 144},
	Q5_K: {"Q5_K", 256, 176}, Q6_K: {"Q6_K", 256, 210}, Q8_K: {"Q8_K", 256, 292},
	IQ4_NL: {"IQ4_NL", 32, 18}, IQ4_XS: {"IQ4_XS", 256, 136},
	IQ2_XXS: {"IQ2_XXS", 256, 66}, IQ2_XS: {"IQ2_XS", 256, 74}, IQ2_S: {"IQ2_S", 256, 82},
	IQ3_XXS: {"IQ3_XXS", 256, 98}, IQ3_S: {"IQ3_S", 256, 110}, IQ1_S: {"IQ1_S", 256, 50}, IQ1_M: {"IQ1_M", 256, 56},
	TQ1_0: {"TQ1_0", 256, 54}, TQ2_0: {"TQ2_0", 256, 66},
}

// String returns the type's name as ggml spells it ("Q4_K").
func (t Type) String() string {
	if i, ok := typeInfo[t]; ok {
		return i.name
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// Block returns the elements per block and bytes per block of the type;
// 0, 0 when tracer does not know it.
func (t Type) Block() (elems, bytes int) {
	i := typeInfo[t]
	return i.block, i.siz
}

// Has reports whether the file holds key.
func (f *File) Has(key string) bool {
	_, ok := f.byKey[key]
	return ok
}

// Value returns the value of key.
func (f *File) Value(key string) (any, bool) {
	i, ok := f.byKey[key]
	if !ok {
		return nil, false
	}
	return f.Meta[i].Value, true
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.byTensor[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// errType reports a key whose value has the wrong type.
func (f *File) errType(key, want string) error {
	i := f.byKey[key]
	return fmt.Errorf("gguf: %s: metadata %q is a %s, want %s", f.Name, key, f.Meta[i].Type, want)
}

// String returns the string value of key; ok is false when it is absent.
func (f *File) String(key string) (s string, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, f.errType(key, "string")
	}
	return s, true, nil
}

// Uint returns an integer value of key (any integer type, not negative);
// ok is false when it is absent.
func (f *File) Uint(key string) (n uint64, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false, nil
	}
	n, isUint := asUint(v)
	if !isUint {
		return 0, true, fmt.Errorf("gguf: %s: metadata %q is %v (%s), want a non-negative integer", f.Name, key, v, f.Meta[f.byKey[key]].Type)
	}
	return n, true, nil
}

// Float returns a number value of key (float or integer); ok is false when
// it is absent.
func (f *File) Float(key string) (x float64, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return 0, false, nil
	}
	switch v := v.(type) {
	case float32:
		return float64(v), true, nil
	case float64:
		return v, true, nil
	}
	if n, isUint := asUint(v); isUint {
		return float64(n), true, nil
	}
	return 0, true, f.errType(key, "number")
}

// Bool returns the bool value of key; ok is false when it is absent.
func (f *File) Bool(key string) (b bool, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, f.errType(key, "bool")
	}
	return b, true, nil
}

// Strings returns the string array of key; ok is false when it is absent.
func (f *File) Strings(key string) (s []string, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return nil, false, nil
	}
	s, isStrs := v.([]string)
	if !isStrs {
		return nil, true, f.errType(key, "array of strings")
	}
	return s, true, nil
}

// Float32s returns the float32 array of key; ok is false when it is absent.
func (f *File) Float32s(key string) (x []float32, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return nil, false, nil
	}
	x, isF := v.([]float32)
	if !isF {
		return nil, true, f.errType(key, "array of float32")
	}
	return x, true, nil
}

// Ints returns an integer array of key widened to int64 (any integer
// element type); ok is false when it is absent.
func (f *File) Ints(key string) (x []int64, ok bool, err error) {
	v, ok := f.Value(key)
	if !ok {
		return nil, false, nil
	}
	switch a := v.(type) {
	case []int32:
		return widen(a), true, nil
	case []uint32:
		return widen(a), true, nil
	case []int8:
		return widen(a), true, nil
	case []uint8:
		return widen(a), true, nil
	case []int16:
		return widen(a), true, nil
	case []uint16:
		return widen(a), true, nil
	case []int64:
		return a, true, nil
	}
	return nil, true, f.errType(key, "array of integers")
}

func widen[T int8 | uint8 | int16 | uint16 | int32 | uint32](a []T) []int64 {
	out := make([]int64, len(a))
	for i, v := range a {
		out[i] = int64(v)
	}
	return out
}

// asUint converts a non-negative integer value of any width.
func asUint(v any) (uint64, bool) {
	var n int64
	switch v := v.(type) {
	case uint8:
		return uint64(v), true
	case uint16:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case uint64:
		return v, true
	case int8:
		n = int64(v)
	case int16:
		n = int64(v)
	case int32:
		n = int64(v)
	case int64:
		n = v
	default:
		return 0, false
	}
	if n < 0 {
		return 0, false
	}
	return uint64(n), true
}

// TypeBytes is the tensor data of one ggml type in a file.
type TypeBytes struct {
	Type    string `json:"type"` // ggml's name: "Q4_K"
	Tensors int    `json:"tensors"`
	Bytes   int64  `json:"bytes"`
}

// BytesByType sums the file's tensor data per ggml type, most bytes first.
func (f *File) BytesByType() []TypeBytes {
	at := map[Type]int{}
	var out []TypeBytes
	for _, t := range f.Tensors {
		i, ok := at[t.Type]
		if !ok {
			i = len(out)
			at[t.Type] = i
			out = append(out, TypeBytes{Type: t.Type.String()})
		}
		out[i].Tensors++
		out[i].Bytes += int64(len(t.Data))
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Bytes > out[b].Bytes })
	return out
}
