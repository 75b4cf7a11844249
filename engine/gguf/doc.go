// Package gguf reads GGUF files, the single-file model format of llama.cpp
// and Ollama: a header, typed metadata key-value pairs, tensor descriptions
// and the tensor data, aligned, at the end.
//
// The layout (all little-endian; versions 2 and 3 share it):
//
//	magic "GGUF", uint32 version, uint64 tensor count, uint64 metadata count
//	metadata: string key, uint32 value type, value
//	tensor infos: string name, uint32 n_dims, uint64 dims[n_dims] (innermost
//	              first), uint32 ggml type, uint64 offset into the data
//	padding to general.alignment (default 32), then the tensor data
//
// A string is a uint64 byte length and the bytes; an array is a uint32
// element type, a uint64 count and the elements. Parse checks every count,
// length, offset and size against the bytes that are there before it
// allocates or slices anything, so a hostile file is an error, never a
// panic or a huge allocation.
package gguf
