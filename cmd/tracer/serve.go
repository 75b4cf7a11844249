package main

import (
	"context"
	"fmt"
	"io"
)

func cmdServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "[flags]", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	_ = addr
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	fmt.Fprintln(stderr, "tracer serve: not yet")
	return exitError
}
