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
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"tracer/engine/bench"
	"tracer/engine/hub"
	"tracer/engine/remote"
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
	maxSessions := fs.Int("max-sessions", web.DefaultMaxSessions, "open pages kept; a page connected is never dropped for a new one")
	maxRowsBeams := fs.Int("max-rows-beams", web.DefaultMaxRowsBeams, "the most prompts × beams one run may use")
	maxRunMiB := fs.Int64("max-run-mib", web.DefaultMaxRunBytes>>20, "the most memory one run may need by estimate (KV cache and recorded steps; the weights are shared), in MiB")
	maxImportsMiB := fs.Int64("max-import-mib", web.DefaultMaxImports>>20, "imported traces all pages together may hold, in MiB")
	maxHeldMiB := fs.Int64("max-held-mib", web.DefaultMaxHeld>>20, "full logits (for what-if) and KV caches (for branching) all finished runs together may hold, in MiB; past it the oldest runs drop them, those of pages no longer open first")
	runs := fs.Int("runs", web.DefaultGenerations, "runs generating at once, all pages together; runs on one model share each step's pass over the weights, so a class's runs go together; more wait in line, each page told its place")
	maxPageRuns := fs.Int("max-page-runs", web.DefaultMaxPageRuns, "runs one page may have going at once (a stopped run counts until it has ended)")
	maxBranches := fs.Int("max-branches", web.DefaultMaxBranches, "branches one run may grow, or an imported trace carry")
	maxPullMiB := fs.Int64("max-pull-mib", web.DefaultMaxPullBytes>>20, "the largest model a page may download from the Hub, in MiB")
	maxPulls := fs.Int("max-pulls", web.DefaultMaxPulls, "downloads from the Hub running at once")
	noPull := fs.Bool("no-pull", false, "pages never download models (otherwise: anyone on a loopback server, the instructor in --classroom mode)")
	var allowHosts stringList
	fs.Var(&allowHosts, "allow-host", "a host name the server answers to besides localhost and its IP address, e.g. the machine's name students type (repeatable)")
	var servers stringList
	fs.Var(&servers, "server", "a serving engine whose models the page offers beside the local ones, as NAME=URL, e.g. gpu=http://10.0.0.5:8000 (llama.cpp, vLLM, SGLang, Ollama or any OpenAI-compatible server; repeatable)")
	keyEnv := fs.String("server-key-env", "OPENAI_API_KEY", "environment variable holding the servers' API key (sent as a bearer token; never logged, shown or recorded)")
	verbose := fs.Bool("v", false, "log requests and imports to stderr")
	if code := parse(fs, args, stdout); code >= 0 {
		return code
	}
	for _, l := range []struct {
		name string
		n    int64
	}{
		{"max-sessions", int64(*maxSessions)}, {"max-rows-beams", int64(*maxRowsBeams)}, {"max-run-mib", *maxRunMiB},
		{"max-import-mib", *maxImportsMiB}, {"max-page-runs", int64(*maxPageRuns)}, {"max-pull-mib", *maxPullMiB}, {"max-pulls", int64(*maxPulls)},
		{"max-held-mib", *maxHeldMiB}, {"runs", int64(*runs)}, {"max-branches", int64(*maxBranches)},
	} {
		if l.n <= 0 {
			fmt.Fprintf(stderr, "tracer serve: --%s must be positive, got %d\n", l.name, l.n)
			return exitUsage
		}
	}
	for _, l := range []struct {
		name string
		mib  int64
	}{{"max-import", *maxMiB}, {"max-run-mib", *maxRunMiB}, {"max-import-mib", *maxImportsMiB}, {"max-pull-mib", *maxPullMiB}, {"max-held-mib", *maxHeldMiB}} {
		if l.mib > math.MaxInt64>>20 {
			fmt.Fprintf(stderr, "tracer serve: --%s %d is too large: at most %d MiB\n", l.name, l.mib, int64(math.MaxInt64>>20))
			return exitUsage
		}
	}
	for _, h := range allowHosts {
		if h == "" || strings.ContainsAny(h, ":/ ") {
			fmt.Fprintf(stderr, "tracer serve: --allow-host %q: give a host name without scheme or port, e.g. --allow-host teacher.local\n", h)
			return exitUsage
		}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracer serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	remotes, err := serverFlags(servers, *keyEnv, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "tracer serve: %s\n", hint(err))
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
	machine, probe := machineProbe(ctx, stdout)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "tracer serve: %s\n", hint(err))
		return exitError
	}
	addrs := typeableAddrs(ln.Addr(), net.InterfaceAddrs)
	srv, err := web.New(web.Config{
		Machine:      machine,
		Hub:          pull,
		Model:        *model,
		ModelsDir:    *modelsDir,
		HFCache:      cache,
		Classroom:    *classroom,
		MaxNewTokens: *maxNew,
		MaxTraceSize: *maxMiB << 20,
		MaxSessions:  *maxSessions,
		MaxRowsBeams: *maxRowsBeams,
		MaxRunBytes:  *maxRunMiB << 20,
		MaxHeld:      *maxHeldMiB << 20,
		Generations:  *runs,
		MaxImports:   *maxImportsMiB << 20,
		MaxPageRuns:  *maxPageRuns,
		MaxBranches:  *maxBranches,
		MaxPullBytes: *maxPullMiB << 20,
		MaxPulls:     *maxPulls,
		NoPull:       *noPull,
		AllowHosts:   allowHosts,
		StudentAddr:  addrs[0], // the instructor's page shows the link serve prints
		Servers:      remotes,
		Logger:       slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "tracer serve: %s\n", hint(err))
		return exitError
	}
	probe(srv.Busy)
	fmt.Fprintf(stdout, "tracer: serving on http://%s/ (Ctrl-C to stop)\n", addrs[0])
	if token := srv.TeachToken(); token != "" {
		fmt.Fprintf(stdout, "tracer: classroom: students open http://%s/\n", addrs[0])
		for _, a := range addrs[1:] {
			fmt.Fprintf(stdout, "tracer: classroom: or http://%s/\n", a)
		}
		fmt.Fprintf(stdout, "tracer: instructor (keep this link to yourself): http://%s/?teach=%s\n", addrs[0], token)
	}
	if err := srv.ServeListener(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "tracer serve: %s\n", hint(err))
		return exitError
	}
	fmt.Fprintln(stdout, "tracer: stopped")
	return exitOK
}

// serverFlags reads the --server NAME=URL flags, with the key from the
// variable --server-key-env names. Errors name the flag and never repeat
// a password given in a URL.
func serverFlags(flags []string, keyEnv string, getenv func(string) string) ([]web.ServerConfig, error) {
	if keyEnv == "" || strings.ContainsAny(keyEnv, "= \t") {
		return nil, fmt.Errorf("--server-key-env %q: give the name of an environment variable, e.g. --server-key-env VLLM_API_KEY", keyEnv)
	}
	key := getenv(keyEnv)
	var out []web.ServerConfig
	seen := map[string]bool{}
	for _, f := range flags {
		name, raw, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok || name == "" || strings.ContainsAny(name, "/ \t:"):
			return nil, fmt.Errorf("--server %q: want NAME=URL, a short name without spaces, slashes or colons, e.g. --server gpu=http://10.0.0.5:8000", redactFlag(f))
		case seen[name]:
			return nil, fmt.Errorf("--server %s=...: the name %q is given twice; give each server its own name", name, name)
		}
		if err := remote.CheckURL(raw); err != nil {
			return nil, fmt.Errorf("--server %s=%s: want http://HOST:PORT or https://HOST, e.g. --server %s=http://127.0.0.1:8080", name, redactFlag(raw), name)
		}
		seen[name] = true
		out = append(out, web.ServerConfig{Name: name, URL: strings.TrimSpace(raw), Key: key})
	}
	return out, nil
}

// redactFlag hides a URL's password in a flag's value for messages.
func redactFlag(v string) string {
	at := strings.LastIndexByte(v, '@')
	if at < 0 {
		return v
	}
	start := strings.Index(v, "://")
	if start < 0 || start > at {
		return "..." + v[at:]
	}
	return v[:start+3] + "..." + v[at:]
}

// probeEvery is how often the server measures the machine again, when no
// generation is running: a figure from one moment (another process busy,
// the CPU's clock low) does not stand for good.
const probeEvery = 10 * time.Minute

// machineProbe measures the machine's memory (bench.ProbeMachine, every
// thread: what tracer bench measures) in the background, at once and then
// every probeEvery while busy reports no generation running, and reports
// each measurement on out. get returns the latest; zero until the first.
func machineProbe(ctx context.Context, out io.Writer) (get func() bench.Machine, start func(busy func() bool)) {
	var latest atomic.Pointer[bench.Machine]
	get = func() bench.Machine {
		if m := latest.Load(); m != nil {
			return *m
		}
		return bench.Machine{}
	}
	start = func(busy func() bool) {
		go func() {
			for ctx.Err() == nil {
				if !busy() {
					m, err := bench.ProbeMachine(runtime.NumCPU(), 0)
					if err != nil {
						fmt.Fprintf(out, "tracer: note: the memory bandwidth probe failed: %v\n", err)
						return
					}
					if latest.Load() == nil {
						fmt.Fprintf(out, "tracer: %s\n", machineLine(m))
					}
					latest.Store(&m)
				}
				select {
				case <-ctx.Done():
				case <-time.After(probeEvery):
				}
			}
		}()
	}
	return get, start
}

// machineLine says what the probe measured, as the server reports it.
func machineLine(m bench.Machine) string {
	line := fmt.Sprintf("machine: main memory reads %.1f GB/s (median; %.1f to %.1f over %d passes, %d threads, %d MiB)",
		m.DRAM.MedianGBps, m.DRAM.WorstGBps, m.DRAM.BestGBps, m.Passes, m.Threads, m.ProbeBytes>>20)
	if m.Cache.MedianGBps > 0 {
		line += fmt.Sprintf("; its %d KiB CPU cache %.1f GB/s", m.CacheBytes>>10, m.Cache.MedianGBps)
	}
	return line
}

// typeableAddrs are the host:port addresses a person can type to reach a
// listener: its own address, or, when it listens on every interface
// (0.0.0.0 or [::]), the machine's addresses (IPv4 first, loopback last),
// which interfaces lists.
func typeableAddrs(a net.Addr, interfaces func() ([]net.Addr, error)) []string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return []string{a.String()}
	}
	port := strconv.Itoa(tcp.Port)
	var v4, v6, loop []string
	if list, err := interfaces(); err == nil {
		for _, ia := range list {
			n, ok := ia.(*net.IPNet)
			if !ok || n.IP.IsLinkLocalUnicast() || n.IP.IsMulticast() {
				continue
			}
			hp := net.JoinHostPort(n.IP.String(), port)
			switch {
			case n.IP.IsLoopback():
				loop = append(loop, hp)
			case n.IP.To4() != nil:
				v4 = append(v4, hp)
			default:
				v6 = append(v6, hp)
			}
		}
	}
	out := append(append(v4, v6...), loop...)
	if len(out) == 0 {
		return []string{net.JoinHostPort("127.0.0.1", port)}
	}
	return out
}
