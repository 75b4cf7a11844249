package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	modelhub "tracer/engine/hub"
	"tracer/lessons"
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

// startPull downloads repo into the Hugging Face cache in the background,
// streaming progress to the session's pages; when it is done the model
// joins the menu.
func (s *Server) startPull(sess *session, repo string) error {
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
		opts.Progress = func(file string, done, total int64) {
			if time.Since(last) < progressEvery && done != total {
				return
			}
			last = time.Now()
			s.hub.broadcast(sess.id, pageMessage(msgProgress, fmt.Sprintf("%s: %s %s / %s", spec, file, bytesText(done), totalText(total))))
		}
		s.hub.broadcast(sess.id, pageMessage(msgProgress, w.F(lessons.KeyDbgPullStarted, "repo", spec)))
		if _, err := modelhub.Pull(ctx, spec, opts); err != nil {
			s.hub.broadcast(sess.id, errorMessage(err.Error()))
			return
		}
		s.catalog.rescan()
		s.hub.broadcast(sess.id, pageMessage(msgPulled, w.F(lessons.KeyDbgPullDone, "repo", spec)))
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
