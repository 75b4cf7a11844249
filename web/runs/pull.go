package runs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	modelhub "tracer/engine/hub"
)

// progressEvery is how often a download's progress reaches the page.
const progressEvery = 200 * time.Millisecond

// pulls tracks the downloads pages started: one per repository at a time,
// all cancelled when the server closes.
type pulls struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc // by repository spec
	closed  bool
	Wg      sync.WaitGroup
}

// CancelAll stops every download; a partial file stays resumable.
func (p *pulls) CancelAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, cancel := range p.running {
		cancel()
	}
}

// pullBudget stops a download once its files pass the size limit. The
// Hub's progress reports each file's total as soon as it is known, so a
// repository too large is usually stopped before its big files start.
type pullBudget struct {
	limit int64
	sizes map[string]int64 // by file: its total, or the bytes seen while unknown
}

// add records progress and reports whether the download is still within
// the limit.
func (b *pullBudget) add(file string, done, total int64) bool {
	b.sizes[file] = max(b.sizes[file], done, total)
	var sum int64
	for _, n := range b.sizes {
		sum += n
	}
	return sum <= b.limit
}

// Pull downloads repo into the Hugging Face cache in the background:
// started hears the repository's spec once it starts, progress a line
// per file (at most every progressEvery), ended its end: nil once the model
// joined the menu, else why not (redacted).
func (s *Runner) Pull(repo string, started func(spec string), progress func(text string), ended func(spec string, err error)) error {
	if s.cfg.Hub == nil || s.cfg.HFCache == "" {
		return errors.New("this server does not download models: start it without HF_HUB_OFFLINE, or run tracer pull ORG/NAME")
	}
	ref, err := modelhub.ParseRef(repo)
	if err != nil {
		return err
	}
	spec := ref.String()
	p := &s.Pulls
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("the server is shutting down")
	}
	if _, ok := p.running[spec]; ok {
		return fmt.Errorf("%s is already downloading", spec)
	}
	if len(p.running) >= s.cfg.MaxPulls {
		return fmt.Errorf("%d downloads are running, this server's limit: wait for one to finish (the server's --max-pulls sets the limit)", len(p.running))
	}
	if p.running == nil {
		p.running = map[string]context.CancelFunc{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.running[spec] = cancel
	p.Wg.Add(1)
	go func() {
		defer p.Wg.Done()
		defer func() {
			p.mu.Lock()
			delete(p.running, spec)
			p.mu.Unlock()
			cancel()
		}()
		opts := *s.cfg.Hub
		opts.CacheDir = s.cfg.HFCache
		var last time.Time
		budget := pullBudget{limit: s.cfg.MaxPullBytes, sizes: map[string]int64{}}
		tooBig := false
		opts.Progress = func(file string, done, total int64) {
			if !budget.add(file, done, total) && !tooBig {
				tooBig = true
				cancel()
			}
			if time.Since(last) < progressEvery && done != total {
				return
			}
			last = time.Now()
			progress(fmt.Sprintf("%s: %s %s / %s", spec, file, bytesText(done), totalText(total)))
		}
		started(spec)
		err := s.Guard("the download of "+spec, func() error {
			_, err := modelhub.Pull(ctx, spec, opts)
			return err
		})
		if tooBig {
			err = fmt.Errorf("%s is larger than this server's download limit of %s, so the download stopped: run tracer pull %s on the server's machine, or start the server with a larger --max-pull-mib", spec, SizeText(s.cfg.MaxPullBytes), spec)
		}
		if err != nil {
			ended(spec, errors.New(s.Catalog.Redact(err.Error())))
			return
		}
		s.Catalog.Rescan()
		ended(spec, nil)
	}()
	return nil
}

func totalText(n int64) string {
	if n < 0 {
		return "?"
	}
	return bytesText(n)
}
