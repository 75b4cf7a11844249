// Package live is the page's live protocol: the sessions (one per open
// page: its document, its position, its running job), the hub of WebSocket
// connections with a read and a write pump per page (as gorilla's chat
// example), the messages a page sends and the answers it gets back
// (message.go lists them all), and the classroom's roles: the instructor
// who drives, the students who follow (classroom.go), the stream that
// carries the instructor's views to them (cast.go, classcast.go) and the
// students' quiz answers the instructor sees counted (quiz.go).
//
// A Protocol runs the pages' generations on a runs.Runner and renders
// their views with web/view. It imports web/runs, web/view, web/words,
// web/pack, the lessons (whose questions a class answers) and
// gorilla/websocket; nothing below web imports it, and only web (which
// routes /ws and /quiz to it) uses it.
package live
