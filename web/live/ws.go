package live

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"tracer/web/runs"
)

// WebSocket limits, after gorilla/websocket's chat example, with time for
// a page that is still reading what it was sent (see client.alive).
const (
	writeWait      = 10 * time.Second // time allowed to write one message
	pingPeriod     = 50 * time.Second // ping this often
	pongWait       = 2 * time.Minute  // time allowed without a pong or message from the page, nor progress writing to it
	maxMessageSize = 64 << 10         // largest message a page may send (a run form with its prompts), in bytes
	sendBuffer     = 16               // error replies queued per connection before it counts as stuck
	// classStatusEvery is how often the instructor's page hears of the class.
	classStatusEvery = time.Second
	// castWait is how long one message of the classroom's stream may take
	// to write (a piece of the document, for a page that joins) before the
	// page counts as stuck: a room of students joining at once shares one
	// network. A page that waits holds only its pumps; the messages are
	// shared. castCompression is the stream's deflate level.
	castWait        = time.Minute
	castCompression = 6
)

// hub owns the set of open connections. Every message to a connection goes
// through the hub, so a connection's send channel is closed exactly once,
// by the hub, and never written after.
//
// A connection gets three kinds of messages. Views and its run's place in
// the line for a slot are coalesced: it holds only the newest one of each
// not yet written, so a slow page skips them instead of slowing the
// server. Replies (errors, what-if) queue in order, up to sendBuffer; a
// page that lets them pile up is dropped.
type hub struct {
	Mu        sync.Mutex
	clients   map[*client]struct{}
	BySession map[string]map[*client]struct{}
	closed    bool           // shutting down: no new connections
	pumps     sync.WaitGroup // the read and write pumps of every connection
}

func newHub() *hub {
	return &hub{clients: map[*client]struct{}{}, BySession: map[string]map[*client]struct{}{}}
}

// add registers c and counts its two pumps, which the caller must start;
// it reports false once the hub is shutting down. Counting under the lock
// that closeAll takes makes every Add happen before wait's Wait.
func (h *hub) add(c *client) bool {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	if h.closed {
		return false
	}
	h.clients[c] = struct{}{}
	set := h.BySession[c.sess.ID]
	if set == nil {
		set = map[*client]struct{}{}
		h.BySession[c.sess.ID] = set
	}
	set[c] = struct{}{}
	c.sess.Conns.Add(1)
	c.sess.seen.Store(true)
	h.pumps.Add(2)
	return true
}

// Wait waits until the pumps of every connection have ended, or ctx ends.
// Call it after closeAll.
func (h *hub) Wait(ctx context.Context) error {
	return runs.WaitOrGiveUp(ctx, &h.pumps, "web: WebSocket connections did not close in time")
}

// remove unregisters c and closes its send channel, which tells its write
// pump to send a close frame and stop.
func (h *hub) remove(c *client) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	h.Drop(c)
}

func (h *hub) Drop(c *client) {
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	c.sess.Conns.Add(-1)
	set := h.BySession[c.sess.ID]
	delete(set, c)
	if len(set) == 0 {
		delete(h.BySession, c.sess.ID)
	}
	close(c.send)
}

// send queues an error reply for c. A connection whose queue is full is
// stuck: it is dropped rather than allowed to hold the server up.
func (h *hub) send(c *client, msg []byte) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	h.sendLocked(c, msg)
}

func (h *hub) sendLocked(c *client, msg []byte) {
	if _, ok := h.clients[c]; !ok {
		return
	}
	select {
	case c.send <- msg:
	default:
		h.Drop(c)
	}
}

// broadcast queues an error reply for every connection of the session.
func (h *hub) broadcast(sessionID string, msg []byte) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for c := range h.BySession[sessionID] {
		h.sendLocked(c, msg)
	}
}

// offer hands c a view; it replaces any older view c has not written yet.
func (h *hub) offer(c *client, msg []byte, seq uint64) {
	c.offer(msg, seq)
}

// placeSession tells every connection of the session where its run
// waits in line: ahead runs before it, -1 once it waits no more.
func (h *hub) placeSession(sessionID string, ahead int) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for c := range h.BySession[sessionID] {
		c.place(ahead)
	}
}

// offerSession hands a view to every connection of the session.
func (h *hub) offerSession(sessionID string, msg []byte, seq uint64) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for c := range h.BySession[sessionID] {
		c.offer(msg, seq)
	}
}

// wakeSession wakes the write pump of every connection of the session.
func (h *hub) wakeSession(sessionID string) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for c := range h.BySession[sessionID] {
		c.nudge()
	}
}

// classPages returns the sessions of leader's class with open
// connections that follow it right now (following true) or explore on
// their own (false), each once.
func (h *hub) classPages(leader *Session, following bool) []*Session {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	var out []*Session
	seen := map[*Session]bool{}
	for c := range h.clients {
		if s := c.sess; s.Leader == leader && s.Following() == following && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// wakeFollowers wakes the write pump of every connection that follows
// leader: each takes what it lacks of the classroom's stream.
func (h *hub) wakeFollowers(leader *Session) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for c := range h.clients {
		if s := c.sess; s.Leader == leader && s.Following() {
			c.nudge()
		}
	}
}

// restartStream has every page of the session take the classroom's
// stream from its start, as after a "view" message of a following page.
func (h *hub) restartStream(sess *Session) {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	for c := range h.BySession[sess.ID] {
		c.castAgain.Store(true)
		c.nudge()
	}
}

// classStatus counts the pages of leader's class: those following, those
// exploring on their own, and how many of the leader's changes (stamp is
// the latest) the slowest follower has not yet been sent.
func (h *hub) classStatus(leader *Session, stamp uint64) classStatus {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	var st classStatus
	for c := range h.clients {
		s := c.sess
		switch {
		case s.Leader != leader:
		case s.Following():
			st.Following++
			if at := c.castAt.Load(); stamp > at {
				st.Behind = max(st.Behind, stamp-at)
			}
		default:
			st.Detached++
		}
	}
	return st
}

// CloseAll closes every connection and refuses new ones.
func (h *hub) CloseAll() {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	h.closed = true
	for c := range h.clients {
		h.Drop(c)
	}
}

// Count returns the number of open connections.
func (h *hub) Count() int {
	h.Mu.Lock()
	defer h.Mu.Unlock()
	return len(h.clients)
}

// client is one WebSocket connection of a page.
type client struct {
	srv  *Protocol
	sess *Session
	conn *websocket.Conn
	send chan []byte   // error replies for the write pump; closed by the hub
	wake chan struct{} // a view is waiting (capacity 1)

	mu      sync.Mutex
	view    []byte // the newest view not yet written; nil when none
	viewSeq uint64 // its sequence number, or the last written one's
	ahead   int    // the newest place in line not yet written (runs ahead, -1 none)
	placed  bool   // whether ahead waits to be written

	cast      State         // what the page holds of the classroom's stream; the write pump's alone
	castAt    atomic.Uint64 // the leader's stamp of the last stream message written
	castAgain atomic.Bool   // the page asked for the stream from its start
}

func newClient(s *Protocol, sess *Session, conn *websocket.Conn) *client {
	return &client{srv: s, sess: sess, conn: conn, send: make(chan []byte, sendBuffer), wake: make(chan struct{}, 1)}
}

// offer keeps msg as the view to write next unless a newer one is
// already waiting or written, and wakes the write pump. It never blocks.
func (c *client) offer(msg []byte, seq uint64) {
	c.mu.Lock()
	if seq <= c.viewSeq {
		c.mu.Unlock()
		return
	}
	c.view, c.viewSeq = msg, seq
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// place keeps the run's newest place in line to write next, in place of
// any older one not yet written, and wakes the write pump. It never
// blocks: a page far back in a long line would otherwise queue a message
// for every run that starts ahead of it, and be dropped as stuck.
func (c *client) place(ahead int) {
	c.mu.Lock()
	c.ahead, c.placed = ahead, true
	c.mu.Unlock()
	c.nudge()
}

// takePlace returns the place in line waiting to be written, as a "queue"
// message, or nil.
func (c *client) takePlace() []byte {
	c.mu.Lock()
	ahead, placed := c.ahead, c.placed
	c.placed = false
	c.mu.Unlock()
	if !placed {
		return nil
	}
	b, _ := json.Marshal(queueMessage{Type: msgQueue, Ahead: ahead})
	return b
}

// nudge wakes the write pump without a view: a follower's pump then takes
// what it lacks of the classroom's stream.
func (c *client) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// takeView returns the waiting view, if any.
func (c *client) takeView() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := c.view
	c.view = nil
	return v
}

// newUpgrader returns the upgrader for page connections: only pages served
// by this server (same origin) may connect.
func newUpgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		ReadBufferSize:  4096,
		WriteBufferSize: 16 << 10,
		CheckOrigin:     sameOrigin,
		// Views sent whole (to the instructor, a detached student) are
		// compressed where the browser agrees (permessage-deflate).
		EnableCompression: true,
	}
}

// sameOrigin accepts requests without an Origin header (not from a browser)
// and those whose Origin names the host the request was sent to.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// HandleWS upgrades a page's connection and starts its two pumps. The
// classroom's instructor session takes the instructor's token. A page
// whose session has expired (it reconnects after a network blip, say) is
// told so in an "expired" message and reloads into a fresh session.
func (s *Protocol) HandleWS(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.Sessions.Get(r.URL.Query().Get("session"))
	if !ok {
		s.expiredWS(w, r)
		return
	}
	if sess.Teach && !s.Instructor(r) {
		http.Error(w, "this session is the instructor's: it needs the instructor's link", http.StatusForbidden)
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the request
	}
	c := newClient(s, sess, conn)
	if !s.Hub.add(c) {
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"), time.Now().Add(writeWait))
		conn.Close()
		return
	}
	go c.writePump()
	go c.readPump()
}

// expiredWS answers a connection for a session the server no longer holds:
// one "expired" message, then a close with 1008 (policy), which the page
// does not retry. A request that is not a WebSocket handshake gets 404.
func (s *Protocol) expiredWS(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(writeWait))
	conn.WriteMessage(websocket.TextMessage, pageMessage(MsgExpired, expiredText))
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "session expired"), time.Now().Add(writeWait))
}

// expiredText tells a page its session is gone.
const expiredText = "This page's session has expired or the server restarted: the page reloads with a fresh one."

// readPump reads the page's messages and answers each one. It ends when the
// connection fails or closes, or a message breaks the limits, and then
// unregisters the client, which stops the write pump.
func (c *client) readPump() {
	defer c.srv.Hub.pumps.Done()
	defer func() {
		c.srv.Hub.remove(c)
		c.conn.Close()
		c.sess.touch(time.Now()) // its idle time starts now
	}()
	c.conn.SetReadLimit(maxMessageSize)
	c.conn.SetReadDeadline(time.Now().Add(pongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(pongWait))
	})
	for {
		kind, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		c.conn.SetReadDeadline(time.Now().Add(pongWait))
		c.sess.touch(time.Now())
		if kind != websocket.TextMessage {
			c.srv.Hub.send(c, ErrorMessage("bad message: send JSON text, not binary data"))
			continue
		}
		c.srv.handleMessage(c, data)
	}
}

// writePump writes queued replies and views and pings the page. A closed
// send channel means the hub dropped the client: say goodbye and stop.
func (c *client) writePump() {
	defer c.srv.Hub.pumps.Done()
	ticker := time.NewTicker(pingPeriod)
	var status <-chan time.Time // the instructor's pages: the class, every second
	var lastStatus []byte
	var lastQuiz uint64 // the version of the quiz answers the page shows (quiz.go)
	if c.sess.Teach {
		t := time.NewTicker(classStatusEvery)
		defer t.Stop()
		status = t.C
	}
	defer func() {
		ticker.Stop()
		c.conn.Close()
	}()
	write := func(kind int, msg []byte) bool {
		c.conn.SetWriteDeadline(time.Now().Add(writeWait))
		if c.conn.WriteMessage(kind, msg) != nil {
			return false
		}
		c.alive()
		return true
	}
	for {
		select {
		case msg, ok := <-c.send:
			if !ok {
				write(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
				return
			}
			if !write(websocket.TextMessage, msg) {
				return
			}
		case <-c.wake:
			if p := c.takePlace(); p != nil && !write(websocket.TextMessage, p) {
				return
			}
			if c.sess.Following() {
				c.takeView() // the stream shows the instructor's view
				if !c.writeCast() {
					return
				}
				continue
			}
			if v := c.takeView(); v != nil && !write(websocket.TextMessage, v) {
				return
			}
		case <-status:
			if m := c.srv.classMessage(); !bytes.Equal(m, lastStatus) {
				lastStatus = m
				if !write(websocket.TextMessage, m) {
					return
				}
			}
			c.sess.Mu.Lock()
			lang := c.sess.Lang
			c.sess.Mu.Unlock()
			if m, v := c.srv.quizMessage(lang, lastQuiz); m != nil {
				lastQuiz = v
				if !write(websocket.TextMessage, m) {
					return
				}
			}
		case <-ticker.C:
			if !write(websocket.PingMessage, nil) {
				return
			}
		}
	}
}

// alive notes that the page took a message: a page still reading what
// was sent (a class joining at once on one network) has its pong to our
// ping queued behind it, and counts as alive.
func (c *client) alive() {
	c.conn.SetReadDeadline(time.Now().Add(pongWait))
}

// writeCast writes what the page lacks of the classroom's stream, if
// anything, a message at a time; it reports false when the connection
// failed.
func (c *client) writeCast() bool {
	s := c.srv
	g, o := s.castGroup(c.sess)
	if err := s.castShow(g, o); err != nil {
		s.Hub.send(c, ErrorMessage(err.Error()))
		return true
	}
	if c.castAgain.Swap(false) {
		c.cast = State{}
	}
	c.conn.SetCompressionLevel(castCompression) // compressed once for every follower
	for {
		m, err := s.Class.cast.stream.Next(g, &c.cast)
		if err != nil {
			s.Hub.send(c, ErrorMessage(err.Error()))
			return true
		}
		if m == nil {
			return true
		}
		c.conn.SetWriteDeadline(time.Now().Add(castWait))
		if c.conn.WritePreparedMessage(m) != nil {
			return false
		}
		c.alive()
		c.castAt.Store(c.cast.Stamp())
	}
}
