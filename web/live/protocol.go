package live

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"tracer/engine/bench"
	modelhub "tracer/engine/hub"
	"tracer/web/runs"
	"tracer/web/view"
	"tracer/web/words"
)

// Protocol is the live side of the server: the pages' sessions, their
// WebSocket connections and the messages they exchange, the classroom's
// roles, and the views each page is sent. It runs generations on the
// runner it embeds.
type Protocol struct {
	*runs.Runner
	cfg      Config
	Lesson   *runs.Document // the toy's lesson, never changed: shown beside real runs
	Class    *classroom     // nil outside classroom mode
	Sessions *store
	Hub      *hub
	upgrader *websocket.Upgrader
	Book     *words.Book // the page's words, every language

	Seq atomic.Uint64 // numbers views, so pages keep the newest
	// renders holds one token per running generation's view being
	// rendered (publishGate): at most half the CPUs, so that the runs'
	// forward passes keep the others.
	renders chan struct{}
	whatIfs chan struct{}    // one token per what-if being computed (whatIfAnswer)
	queue   runQueue         // the runs waiting for a slot
	held    heldRuns         // what finished runs hold of full logits and KV caches (held.go)
	Charts  *view.ChartCache // every page's rendered charts
}

// Config is what the protocol holds pages to (see Config's fields of
// the same names); OnLoopback says whether the server listens on loopback
// only (who may pull models outside classroom mode).
type Config struct {
	MaxSessions  int
	SessionTTL   time.Duration
	MaxPageRuns  int
	MaxHeld      int64
	NoPull       bool
	Machine      func() bench.Machine
	OnLoopback   func() bool
	Hub          *modelhub.Options
	HFCache      string
	MaxPullBytes int64
	MaxPulls     int
}

// New makes the protocol of a server whose runs rn runs.
func New(cfg Config, rn *runs.Runner) *Protocol {
	return &Protocol{
		Runner:   rn,
		cfg:      cfg,
		Sessions: newStore(cfg.MaxSessions, cfg.SessionTTL),
		Hub:      newHub(),
		upgrader: newUpgrader(),
		renders:  make(chan struct{}, max(1, runtime.NumCPU()/2)),
		whatIfs:  make(chan struct{}, max(1, runtime.NumCPU()/2)),
		Charts:   view.NewChartCache(view.ChartCacheSize, view.ChartCacheBytes),
	}
}

// Words is the server's wording in lang.
func (s *Protocol) Words(lang string) words.Words {
	return s.Book.In(lang)
}

// Shown is a snapshot of what sess's page shows (the instructor's
// document while it follows), and the page's language.
func (s *Protocol) Shown(sess *Session) (*runs.Document, string) {
	sess.Mu.Lock()
	lang := sess.Lang
	sess.Mu.Unlock()
	src := sess.source()
	src.Mu.Lock()
	defer src.Mu.Unlock()
	return src.Doc.Snapshot(), lang
}
