package view

// The instructor's dashboard: the link students open with its QR code,
// and the class's quiz answers, counted without names.

// ClassView is the dashboard on the instructor's page.
type ClassView struct {
	Link string // the students' link, e.g. "http://192.168.1.5:8080/"
	QR   QRView // the link as a QR code
	Quiz ClassQuizView
}

// QRView is a QR code drawn as one SVG path of its dark modules, one unit
// a module, with a light quiet zone of QuietZone modules all round.
type QRView struct {
	Size int    // modules a side, the quiet zone not included
	Path string // "M4 4h7v1h-7z…": a rectangle for each run of dark modules along a row
}

// QuietZone is the light margin a QR code needs around it, in modules.
const QuietZone = 4

// Side is the SVG's side with the quiet zone, in modules.
func (q QRView) Side() int { return q.Size + 2*QuietZone }

// ClassQuizView is the class's quiz answers: for every question answered
// so far, how many students picked each option.
type ClassQuizView struct {
	Title     string // "Quiz answers"
	Empty     string // shown before the first answer
	Correct   string // the right option's label for screen readers
	Questions []ClassQuestionView
}

// ClassQuestionView is one question's answers.
type ClassQuestionView struct {
	ID      string // "lesson/step/question", for tests
	Lesson  string // "Lesson 4"
	Text    string // the question, shortened
	Total   string // "answers: 12"
	Options []ClassOptionView
}

// ClassOptionView is how many students picked one option.
type ClassOptionView struct {
	ID      string // the option's id in the lesson
	Label   string // "A", "B", …
	Text    string // the option, shortened
	Count   int
	Width   string // the bar's width, the option's share of the answers: "25%"
	Correct bool
}
