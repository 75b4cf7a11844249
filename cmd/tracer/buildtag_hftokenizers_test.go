//go:build hftokenizers

package main

func init() { buildTags = append(buildTags, "hftokenizers") }
