package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// WebSocket limits, as in gorilla/websocket's chat example.
const (
	writeWait      = 10 * time.Second    // time allowed to write one message
	pongWait       = 60 * time.Second    // time allowed between pongs from the page
	pingPeriod     = (pongWait * 9) / 10 // ping this often; must be less than pongWait
	maxMessageSize = 1024                // largest message a page may send, in bytes
	sendBuffer     = 16                  // messages queued per connection before it counts as slow
)

// hub owns the set of open connections. Every message to a connection goes
// through the hub, so a connection's send channel is closed exactly once,
// by the hub, and never written after.
type hub struct {
	mu      sync.Mutex
	clients map[*client]struct{}
	closed  bool           // shutting down: no new connections
	pumps   sync.WaitGroup // the read and write pumps of every connection
}

func newHub() *hub { return &hub{clients: map[*client]struct{}{}} }

// add registers c and counts its two pumps, which the caller must start;
// it reports false once the hub is shutting down. Counting under the lock
// that closeAll takes makes every Add happen before wait's Wait.
func (h *hub) add(c *client) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.clients[c] = struct{}{}
	h.pumps.Add(2)
	return true
}

// wait waits until the pumps of every connection have ended, or ctx ends.
// Call it after closeAll.
func (h *hub) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { h.pumps.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("web: WebSocket connections did not close in time")
	}
}

// remove unregisters c and closes its send channel, which tells its write
// pump to send a close frame and stop.
func (h *hub) remove(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(c)
}

func (h *hub) drop(c *client) {
	if _, ok := h.clients[c]; ok {
		delete(h.clients, c)
		close(c.send)
	}
}

// send queues msg for c. A connection whose queue is full is too slow to
// keep up: it is dropped rather than allowed to block the server.
func (h *hub) send(c *client, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sendLocked(c, msg)
}

func (h *hub) sendLocked(c *client, msg []byte) {
	if _, ok := h.clients[c]; !ok {
		return
	}
	select {
	case c.send <- msg:
	default:
		h.drop(c)
	}
}

// broadcast queues msg for every connection of the session.
func (h *hub) broadcast(sessionID string, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if c.sess.id == sessionID {
			h.sendLocked(c, msg)
		}
	}
}

// closeAll closes every connection and refuses new ones.
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.clients {
		h.drop(c)
	}
}

// count returns the number of open connections.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// client is one WebSocket connection of a page.
type client struct {
	srv  *Server
	sess *session
	conn *websocket.Conn
	send chan []byte // messages for the write pump; closed by the hub
}

// newUpgrader returns the upgrader for page connections: only pages served
// by this server (same origin) may connect.
func newUpgrader() *websocket.Upgrader {
	return &websocket.Upgrader{
		ReadBufferSize:  1024,
		WriteBufferSize: 4096,
		CheckOrigin:     sameOrigin,
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

// handleWS upgrades a page's connection and starts its two pumps.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.sessions.get(r.URL.Query().Get("session"))
	if !ok {
		http.Error(w, "unknown or expired session: reload the page", http.StatusNotFound)
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the request
	}
	c := &client{srv: s, sess: sess, conn: conn, send: make(chan []byte, sendBuffer)}
	if !s.hub.add(c) {
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "server shutting down"), time.Now().Add(writeWait))
		conn.Close()
		return
	}
	go c.writePump()
	go c.readPump()
}

// readPump reads the page's messages and answers each one. It ends when the
// connection fails or closes, or a message breaks the limits, and then
// unregisters the client, which stops the write pump.
func (c *client) readPump() {
	defer c.srv.hub.pumps.Done()
	defer func() {
		c.srv.hub.remove(c)
		c.conn.Close()
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
		if kind != websocket.TextMessage {
			c.srv.hub.send(c, errorMessage("bad message: send JSON text, not binary data"))
			continue
		}
		c.srv.hub.send(c, c.srv.answer(c.sess, data))
	}
}

// writePump writes queued messages and pings the page. A closed send
// channel means the hub dropped the client: say goodbye and stop.
func (c *client) writePump() {
	defer c.srv.hub.pumps.Done()
	ticker := time.NewTicker(pingPeriod)
	defer func() {
		ticker.Stop()
		c.conn.Close()
	}()
	for {
		select {
		case msg, ok := <-c.send:
			c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if !ok {
				c.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
				return
			}
			if err := c.conn.WriteMessage(websocket.TextMessage, msg); err != nil {
				return
			}
		case <-ticker.C:
			c.conn.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		}
	}
}
