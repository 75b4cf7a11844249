package web

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	modelhub "tracer/engine/hub"
	"tracer/web/view"
	"tracer/web/words"
)

// protocol is the live side of the server: the pages' sessions, their
// WebSocket connections and the messages they exchange, the classroom's
// roles, and the views each page is sent. It runs generations on the
// runner it embeds.
type protocol struct {
	*runner
	cfg      liveConfig
	lesson   *document  // the toy's lesson, never changed: shown beside real runs
	class    *classroom // nil outside classroom mode
	sessions *store
	hub      *hub
	upgrader *websocket.Upgrader
	book     *words.Book // the page's words, every language

	seq atomic.Uint64 // numbers views, so pages keep the newest
	// renders holds one token per running generation's view being
	// rendered (publishGate): at most half the CPUs, so that the runs'
	// forward passes keep the others.
	renders chan struct{}
	queue   runQueue         // the runs waiting for a slot
	held    heldRuns         // what finished runs hold of full logits and KV caches (held.go)
	charts  *view.ChartCache // every page's rendered charts
}

// liveConfig is what the protocol holds pages to (see Config's fields of
// the same names); OnLoopback says whether the server listens on loopback
// only (who may pull models outside classroom mode).
type liveConfig struct {
	MaxSessions  int
	SessionTTL   time.Duration
	MaxPageRuns  int
	MaxHeld      int64
	NoPull       bool
	Bandwidth    func() float64
	OnLoopback   func() bool
	Hub          *modelhub.Options
	HFCache      string
	MaxPullBytes int64
	MaxPulls     int
}

// newProtocol makes the protocol of a server whose runs rn runs.
func newProtocol(cfg liveConfig, rn *runner) *protocol {
	return &protocol{
		runner:   rn,
		cfg:      cfg,
		sessions: newStore(cfg.MaxSessions, cfg.SessionTTL),
		hub:      newHub(),
		upgrader: newUpgrader(),
		renders:  make(chan struct{}, max(1, runtime.NumCPU()/2)),
		charts:   view.NewChartCache(view.ChartCacheSize, view.ChartCacheBytes),
	}
}

// words is the server's wording in lang.
func (s *protocol) words(lang string) words.Words {
	return s.book.In(lang)
}

// shown is a snapshot of what sess's page shows (the instructor's
// document while it follows), and the page's language.
func (s *protocol) shown(sess *session) (*document, string) {
	sess.mu.Lock()
	lang := sess.lang
	sess.mu.Unlock()
	src := sess.source()
	src.mu.Lock()
	defer src.mu.Unlock()
	return src.doc.snapshot(), lang
}
