package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"runtime"
	"sync/atomic"

	"tracer/engine/bench"
	"tracer/engine/hub"
	"tracer/web"
)

func cmdServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("serve", "[flags]", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	model := fs.String("model", "toy", `toy the page runs on opening: "toy" or a toy table .json`)
	modelsDir := fs.String("models", "", "a folder of models the page may run: Hugging Face folders, llama2.c .bin files, toy tables")
	classroom := fs.Bool("classroom", false, "classroom mode: print an instructor link that drives what every other page shows")
	maxNew := fs.Int("max-new-tokens", web.DefaultMaxNewTokens, "the most tokens a page may ask one run for")
	maxMiB := fs.Int64("max-import", web.DefaultMaxTraceSize>>20, "largest trace the page may import, in MiB")
	verbose := fs.Bool("v", false, "log requests and imports to stderr")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracer serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *modelsDir != "" {
		if fi, err := os.Stat(*modelsDir); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "tracer serve: --models %s: not a folder\n", *modelsDir)
			return exitUsage
		}
	}
	if *maxNew <= 0 {
		fmt.Fprintf(stderr, "tracer serve: --max-new-tokens must be positive, got %d\n", *maxNew)
		return exitUsage
	}
	if *maxMiB <= 0 {
		fmt.Fprintf(stderr, "tracer serve: --max-import must be positive, got %d\n", *maxMiB)
		return exitUsage
	}
	var cache string
	var pull *hub.Options // nil: pages cannot download (HF_HUB_OFFLINE=1)
	if opts, err := hub.FromEnv(os.Getenv); err == nil {
		cache = opts.CacheDir
		if !opts.Offline {
			pull = &opts
		}
	} else {
		fmt.Fprintf(stderr, "tracer serve: note: the Hugging Face cache is not listed: %v\n", err)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	bw := measureBandwidth(ctx)
	srv, err := web.New(web.Config{
		Bandwidth:    bw,
		Hub:          pull,
		Model:        *model,
		ModelsDir:    *modelsDir,
		HFCache:      cache,
		Classroom:    *classroom,
		MaxNewTokens: *maxNew,
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
	if token := srv.TeachToken(); token != "" {
		fmt.Fprintf(stdout, "tracer: classroom: students open http://%s/\n", ln.Addr())
		fmt.Fprintf(stdout, "tracer: instructor (keep this link to yourself): http://%s/?teach=%s\n", ln.Addr(), token)
	}
	if err := srv.ServeListener(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "tracer serve: %v\n", err)
		return exitError
	}
	fmt.Fprintln(stdout, "tracer: stopped")
	return exitOK
}

// bandwidthProbeBytes is the array the server's bandwidth probe reads: far
// larger than any cache, small enough to measure in well under a second.
const bandwidthProbeBytes = 256 << 20

// measureBandwidth measures the machine's main-memory read bandwidth with
// tracer bench's probe (all cores, best of a few passes) in the background
// and returns a function that reports it in GB/s, 0 until the measurement
// is done or when it failed.
func measureBandwidth(ctx context.Context) func() float64 {
	var bits atomic.Uint64
	go func() {
		if ctx.Err() != nil {
			return
		}
		bw, _, err := bench.ProbeBandwidth(bandwidthProbeBytes, runtime.NumCPU(), 5)
		if err != nil || len(bw) == 0 {
			return
		}
		bits.Store(math.Float64bits(bw[len(bw)-1].BestGBps))
	}()
	return func() float64 { return math.Float64frombits(bits.Load()) }
}
