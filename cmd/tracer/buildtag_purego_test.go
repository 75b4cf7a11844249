//go:build purego

package main

func init() { buildTags = append(buildTags, "purego") }
