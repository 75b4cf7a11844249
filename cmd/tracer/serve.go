package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"

	"tracer/web"
)

func cmdServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "[flags]", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	model := fs.String("model", "toy", `model the page runs on opening: "toy" or a toy table .json`)
	maxMiB := fs.Int64("max-import", web.DefaultMaxTraceSize>>20, "largest trace the page may import, in MiB")
	verbose := fs.Bool("v", false, "log requests and imports to stderr")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracer serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *maxMiB <= 0 {
		fmt.Fprintf(stderr, "tracer serve: --max-import must be positive, got %d\n", *maxMiB)
		return exitUsage
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	srv, err := web.New(web.Config{
		Model:        *model,
		MaxTraceSize: *maxMiB << 20,
		Logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		fmt.Fprintf(stderr, "tracer serve: %v\n", err)
		return exitError
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "tracer serve: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "tracer: serving on http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	if err := srv.ServeListener(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "tracer serve: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, "tracer: stopped")
	return exitOK
}
