package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	modelhub "tracer/engine/hub"
	"tracer/web/words"
)

// progressEvery is how often a download's progress reaches the page.
const progressEvery = 200 * time.Millisecond

// pulls tracks the downloads pages started: one per repository at a time,
// all cancelled when the server closes.
type pulls struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc // by repository spec
	closed  bool
	wg      sync.WaitGroup
}

// cancelAll stops every download; a partial file stays resumable.
func (p *pulls) cancelAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, cancel := range p.running {
		cancel()
	}
}

// mayPull says whether the session's page may download models: never with
// Config.NoPull; in classroom mode, only the instructor; otherwise only
// while the server listens on loopback, where the page is its user's own.
func (s *protocol) mayPull(sess *session) error {
	switch {
	case s.cfg.NoPull:
		return errors.New("this server does not download models (it was started with --no-pull): run tracer pull ORG/NAME on its machine")
	case s.class != nil && !sess.teach:
		return errors.New("in a classroom only the instructor downloads models: ask the instructor")
	case s.class == nil && !s.cfg.OnLoopback():
		return errors.New("this server is open to other machines, so its pages do not download models: run tracer pull ORG/NAME on its machine, or serve in --classroom mode and download from the instructor's page")
	}
	return nil
}

// canPull reports whether the run form shows the download row to sess.
func (s *protocol) canPull(sess *session) bool {
	return s.cfg.Hub != nil && s.cfg.HFCache != "" && (sess == nil || s.mayPull(sess) == nil)
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

// startPull downloads repo into the Hugging Face cache in the background,
// streaming progress to the session's pages; when it is done the model
// joins the menu.
func (s *protocol) startPull(sess *session, repo string) error {
	if s.cfg.Hub == nil || s.cfg.HFCache == "" {
		return errors.New("this server does not download models: start it without HF_HUB_OFFLINE, or run tracer pull ORG/NAME")
	}
	ref, err := modelhub.ParseRef(repo)
	if err != nil {
		return err
	}
	spec := ref.String()
	p := &s.pulls
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
	p.wg.Add(1)
	sess.mu.Lock()
	w := s.words(sess.lang)
	sess.mu.Unlock()
	go func() {
		defer p.wg.Done()
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
			s.hub.broadcast(sess.id, pageMessage(msgProgress, fmt.Sprintf("%s: %s %s / %s", spec, file, bytesText(done), totalText(total))))
		}
		s.hub.broadcast(sess.id, pageMessage(msgProgress, w.F(words.KeyDbgPullStarted, "repo", spec)))
		err := s.guard("the download of "+spec, func() error {
			_, err := modelhub.Pull(ctx, spec, opts)
			return err
		})
		if tooBig {
			err = fmt.Errorf("%s is larger than this server's download limit of %s, so the download stopped: run tracer pull %s on the server's machine, or start the server with a larger --max-pull-mib", spec, sizeText(s.cfg.MaxPullBytes), spec)
		}
		if err != nil {
			s.hub.broadcast(sess.id, errorMessage(s.catalog.Redact(err.Error())))
			return
		}
		s.catalog.Rescan()
		s.hub.broadcast(sess.id, pageMessage(msgPulled, w.F(words.KeyDbgPullDone, "repo", spec)))
	}()
	return nil
}

func totalText(n int64) string {
	if n < 0 {
		return "?"
	}
	return bytesText(n)
}

// pageMessage encodes a short message of type typ.
func pageMessage(typ, text string) []byte {
	b, _ := json.Marshal(outbound{Type: typ, Message: text})
	return b
}
