package hub

import (
	"errors"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// DefaultEndpoint is the Hub's address when HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// Options say where the cache is, how to reach the Hub and what to fetch.
// FromEnv fills the first four from the environment.
type Options struct {
	CacheDir string // the hub cache folder (HF_HUB_CACHE); required
	Endpoint string // the Hub's URL (HF_ENDPOINT); "" means DefaultEndpoint
	Token    string // sent as "Authorization: Bearer" to the Hub only; "" means none
	Offline  bool   // HF_HUB_OFFLINE: answer from the cache, never touch the network

	// File, when set, fetches only this file of the repository (and
	// tokenizer.bin when the repository has one, since llama2.c checkpoints
	// need it), instead of the files tracer needs to run a transformers
	// model.
	File string

	// MaxBytes, when positive, bounds the bytes a pull may download: the
	// sizes the Hub announces for the files the cache lacks are added up
	// before any weights are fetched, and a pull over the limit is refused
	// with an ErrTooLarge error. A file of unknown size is refused under a
	// limit, since it cannot be counted.
	MaxBytes int64
	// MaxFiles, when positive, bounds the number of files a pull may
	// download, checked the same way.
	MaxFiles int

	Client   *http.Client // nil means a client with connection timeouts
	Progress ProgressFunc // nil means silent

	// Waiting, when set, is called once for a file whose download must wait
	// for another (another tracer, or huggingface_hub) that holds its lock
	// file; nil means the wait is silent. It runs on the goroutine that
	// called Pull or Resolve.
	Waiting func(file, lockPath string)
}

// ProgressFunc receives download progress: done of total bytes of file (a
// name inside the repository). total is -1 while unknown; the last call for
// a file has done == total. Calls come from the goroutine that called Pull
// or Resolve.
type ProgressFunc func(file string, done, total int64)

// FromEnv reads Options from the environment the way huggingface_hub does.
// getenv returns "" for unset variables (os.Getenv does).
//
//	HF_HUB_CACHE    the cache folder
//	HF_HOME         else $HF_HOME/hub
//	XDG_CACHE_HOME  else $XDG_CACHE_HOME/huggingface/hub
//	HOME            else ~/.cache/huggingface/hub
//	HF_ENDPOINT     the Hub (default https://huggingface.co)
//	HF_TOKEN        the access token for gated and private models
//	HF_HUB_OFFLINE  1, true, yes or on: use the cache only
func FromEnv(getenv func(string) string) (Options, error) {
	o := Options{
		Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/"),
		Token:    strings.TrimSpace(getenv("HF_TOKEN")),
	}
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	switch strings.ToLower(strings.TrimSpace(getenv("HF_HUB_OFFLINE"))) {
	case "1", "true", "yes", "on":
		o.Offline = true
	}
	switch {
	case getenv("HF_HUB_CACHE") != "":
		o.CacheDir = getenv("HF_HUB_CACHE")
	case getenv("HF_HOME") != "":
		o.CacheDir = filepath.Join(getenv("HF_HOME"), "hub")
	case getenv("XDG_CACHE_HOME") != "":
		o.CacheDir = filepath.Join(getenv("XDG_CACHE_HOME"), "huggingface", "hub")
	default:
		home := getenv("HOME")
		if home == "" && runtime.GOOS == "windows" {
			home = getenv("USERPROFILE")
		}
		if home == "" {
			return o, errors.New("cannot find the Hugging Face cache: set HF_HOME or HF_HUB_CACHE")
		}
		o.CacheDir = filepath.Join(home, ".cache", "huggingface", "hub")
	}
	return o, nil
}

func (o Options) endpoint() string {
	if o.Endpoint == "" {
		return DefaultEndpoint
	}
	return strings.TrimRight(o.Endpoint, "/")
}

// httpClient returns the client to use: the caller's, or one that gives up
// on a silent server but not on a long download.
func (o Options) httpClient() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 60 * time.Second
	return &http.Client{Transport: t}
}
