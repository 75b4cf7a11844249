package lessons

import "strings"

// Strings is the lesson page's own wording, by key. A text may hold
// placeholders in braces ({n}, {total}, {command}) for Fill; every language
// holds the same placeholders.
type Strings map[string]Text

// Get returns the wording of key in lang (English when lang has none), or
// the key itself when the catalog lacks it, so a missing string shows up on
// the page instead of vanishing.
func (s Strings) Get(key, lang string) string {
	if t := s[key].In(lang); t != "" {
		return t
	}
	return key
}

// Fill replaces each {name} in text with its value; pairs alternate names
// and values: Fill("Step {n} of {total}", "n", "2", "total", "9").
func Fill(text string, pairs ...string) string {
	if len(pairs)%2 != 0 {
		panic("lessons: Fill wants names and values in pairs")
	}
	old := make([]string, 0, len(pairs))
	for i := 0; i < len(pairs); i += 2 {
		old = append(old, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(old...).Replace(text)
}

// The keys of the lesson page's wording (Catalog.UI). Load fails when
// data/ui.json lacks one of them, or a language lacks its text.
const (
	KeyLessons         = "lessons"         // "Lessons": the list's heading
	KeyLesson          = "lesson"          // "Lesson"
	KeyLessonN         = "lesson-n"        // "Lesson {n}"
	KeyStepNOfTotal    = "step-n-of-total" // "Step {n} of {total}"
	KeyMomentNOfTotal  = "moment-n-of-total"
	KeyNext            = "next"
	KeyPrevious        = "previous"
	KeyStart           = "start"           // "Start the lesson"
	KeyBackToLessons   = "back-to-lessons" // link to the list
	KeyLessonDone      = "lesson-done"     // shown after a lesson's last step
	KeyNextLesson      = "next-lesson"     // the link to the next lesson, after a lesson's last step: "Next: {title}"
	KeyQuickCheck      = "quick-check"     // the quiz's heading
	KeyCheckAnswer     = "check-answer"    // the quiz's button
	KeyCorrect         = "correct"         // "Correct!"
	KeyNotQuite        = "not-quite"       // "Not quite"
	KeyTryAgain        = "try-again"
	KeyYourProgress    = "your-progress"
	KeyProgressDone    = "progress-done" // "{done} of {total} steps done"
	KeyLanguage        = "language"      // the language menu's label
	KeyLangEnglish     = "lang-en"       // the name of English, as its speakers write it
	KeyLangHindi       = "lang-hi"       // the name of Hindi, as its speakers write it
	KeyRun             = "run"           // the button that runs the step
	KeyRunAgain        = "run-again"
	KeyRunning         = "running"
	KeyModel           = "model"
	KeyToyModel        = "toy-model"        // the toy's name on the page
	KeyRealModel       = "real-model"       // what a "real" run runs on
	KeyCompare         = "compare"          // heading over runs side by side
	KeySameOutput      = "same-output"      // Step.SameOutput held on the traces
	KeyDifferentOut    = "different-output" // ... and did not
	KeyPrompt          = "prompt"
	KeyNewTokens       = "new-tokens"
	KeyStopReason      = "stop-reason"
	KeyNotices         = "notices"
	KeyTransformers    = "in-transformers" // title over a Python listing
	KeyTracerCommand   = "tracer-command"  // title over Run.Command
	KeyCopy            = "copy"
	KeyDownloadModel   = "download-model"    // "Download a model: {command}"
	KeyNoRealModel     = "no-real-model"     // no real model found: what to download
	KeyNoRunnableModel = "no-runnable-model" // real models, none with a tokenizer: what to download
	KeyStartsFromBOS   = "starts-from-bos"   // a run without a prompt

	// The figures of a step's runs.
	KeyDebugger      = "debugger" // link back to the debugger
	KeySteps         = "steps"    // heading of a run's steps
	KeyPhase         = "phase"
	KeyFed           = "fed" // tokens fed at a step
	KeyChosen        = "chosen"
	KeyCandidates    = "candidates"
	KeyFLOPs         = "flops"
	KeyBytes         = "bytes"
	KeyTime          = "time"
	KeyTimePerStep   = "time-per-step"
	KeyBytesPerToken = "bytes-per-token"
	KeyIntensity     = "intensity"
	KeyBandwidth     = "bandwidth"
	KeyPromptIDs     = "prompt-ids"
	KeyNewIDs        = "new-ids"
	KeySequences     = "sequences"
	KeyJunk          = "junk"          // a right-padded row that differs from the left-padded one
	KeyBatchPrompts  = "batch-prompts" // the batch form's label
	KeyPythonLoop    = "python-loop"   // title over the toy's listing
	KeyBigramTable   = "bigram-table"
	KeyLastWord      = "last-word" // the table's first column
	KeyNextWord      = "next-word" // ... and its second
	KeyTokenList     = "token-list"
	KeyOutput        = "output"

	// Choosing the model and opening a run in the debugger.
	KeyLessonModel       = "lesson-model"        // the picker's label
	KeyUseModel          = "use-model"           // the picker's button, without the script
	KeyModelNotOpen      = "model-not-open"      // why a model is not offered: it does not open
	KeyModelNoTokenizer  = "model-no-tokenizer"  // ... it has no tokenizer
	KeyModelFallback     = "model-fallback"      // "{model} cannot run the lessons ({reason}): ... {chosen}"
	KeyOpenInDebugger    = "open-in-debugger"    // a figure's link to the same run in the debugger
	KeyCompareInDebugger = "compare-in-debugger" // a figure's link to its runs as a comparison

	// What a figure draws of a step's scores and of two runs side by side.
	KeySideBySide       = "side-by-side"       // heading of two runs step by step
	KeyPartWaysChosen   = "part-ways-chosen"   // "{n}", "{a}" chose "{x}", "{b}" chose "{y}"
	KeyPartWaysFed      = "part-ways-fed"      // ... fed "{x}" and "{y}" tokens
	KeyNeverPart        = "never-part"         // the runs never differ
	KeyDrawFell         = "draw-fell"          // "{u}" between "{from}" and "{to}": "{token}"
	KeyRawVsTemperature = "raw-vs-temperature" // heading of the paired bars
	KeyRawProbs         = "raw-probs"          // the raw series
	KeyAfterTemperature = "after-temperature"  // the series after the stage, "{t}"
	KeyFunnel           = "funnel"             // heading of the tokens each stage left
	KeyNOfVocab         = "n-of-vocab"         // "{n} of {total}"
	KeyVocabulary       = "vocabulary"         // the funnel's first row
	KeyFinalDist        = "final-dist"         // the funnel's last row

	// What else a figure shows when a step's text points at it.
	KeyOutputIDs     = "output-ids"     // the whole output row: prompt, then new ids
	KeyOptionsTitle  = "options-title"  // heading of the options and their sources
	KeyOptionName    = "option-name"    // its columns
	KeyOptionValue   = "option-value"   //
	KeyOptionSource  = "option-source"  //
	KeyModelWeights  = "model-weights"  // "{params}", "{dtype}", "{bytes}"
	KeyKVCache       = "kv-cache"       // the steps table's cache column
	KeyKVText        = "kv-text"        // "{n} positions, {bytes}"
	KeyAttentionMask = "attention-mask" // a batch row's mask
	KeyRowAtToken    = "row-at-token"   // "row {r}": its last position is a real token; chose "{x}"
	KeyRowAtPad      = "row-at-pad"     // ... is a pad
	KeyLogit         = "logit"          // the candidates' raw score
)

// uiKeys lists every Key constant, for Validate.
func uiKeys() []string {
	return []string{
		KeyLessons, KeyLesson, KeyLessonN, KeyStepNOfTotal, KeyMomentNOfTotal, KeyNext, KeyPrevious,
		KeyStart, KeyBackToLessons, KeyLessonDone, KeyNextLesson, KeyQuickCheck, KeyCheckAnswer, KeyCorrect,
		KeyNotQuite, KeyTryAgain, KeyYourProgress, KeyProgressDone, KeyLanguage, KeyLangEnglish,
		KeyLangHindi, KeyRun, KeyRunAgain, KeyRunning, KeyModel, KeyToyModel, KeyRealModel,
		KeyCompare, KeySameOutput, KeyDifferentOut, KeyPrompt, KeyNewTokens, KeyStopReason,
		KeyNotices, KeyTransformers, KeyTracerCommand, KeyCopy, KeyDownloadModel, KeyNoRealModel, KeyNoRunnableModel,
		KeyStartsFromBOS, KeyDebugger, KeySteps, KeyPhase, KeyFed, KeyChosen, KeyCandidates, KeyFLOPs,
		KeyBytes, KeyTime, KeyTimePerStep, KeyBytesPerToken, KeyIntensity, KeyBandwidth, KeyPromptIDs,
		KeyNewIDs, KeySequences, KeyJunk, KeyBatchPrompts, KeyPythonLoop, KeyBigramTable, KeyTokenList,
		KeyOutput, KeyLastWord, KeyNextWord,
		KeyLessonModel, KeyUseModel, KeyModelNotOpen, KeyModelNoTokenizer, KeyModelFallback,
		KeyOpenInDebugger, KeyCompareInDebugger, KeySideBySide, KeyPartWaysChosen, KeyPartWaysFed,
		KeyNeverPart, KeyDrawFell, KeyRawVsTemperature, KeyRawProbs, KeyAfterTemperature, KeyFunnel,
		KeyNOfVocab, KeyVocabulary, KeyFinalDist,
		KeyOutputIDs, KeyOptionsTitle, KeyOptionName, KeyOptionValue, KeyOptionSource, KeyModelWeights,
		KeyKVCache, KeyKVText, KeyAttentionMask, KeyRowAtToken, KeyRowAtPad, KeyLogit,
	}
}
