package words

// The keys of the debugger page's own wording (data/words.json), beside the
// lessons' words it shares (lessons.Key...). Load fails when words.json
// lacks one of them or a language lacks its text. Texts with {placeholders}
// go through Words.F.
const (
	KeyDbgTagline            = "dbg-tagline"
	KeyDbgImport             = "dbg-import"
	KeyDbgImportTitle        = "dbg-import-title"
	KeyDbgOpen               = "dbg-open"
	KeyDbgExport             = "dbg-export"
	KeyDbgStepping           = "dbg-stepping"
	KeyDbgRunModel           = "dbg-run-model"
	KeyDbgPromptAs           = "dbg-prompt-as"
	KeyDbgAsText             = "dbg-as-text"
	KeyDbgAsIds              = "dbg-as-ids"
	KeyDbgAsChat             = "dbg-as-chat"
	KeyDbgPadding            = "dbg-padding"
	KeyDbgPaddingTitle       = "dbg-padding-title"
	KeyDbgLeft               = "dbg-left"
	KeyDbgRightPitfall       = "dbg-right-pitfall"
	KeyDbgPromptHint         = "dbg-prompt-hint"
	KeyDbgSystemPrompt       = "dbg-system-prompt"
	KeyDbgChatOptional       = "dbg-chat-optional"
	KeyDbgOptions            = "dbg-options"
	KeyDbgOptionsHint        = "dbg-options-hint"
	KeyDbgDecoding           = "dbg-decoding"
	KeyDbgModelDefault       = "dbg-model-default"
	KeyDbgGreedy             = "dbg-greedy"
	KeyDbgSample             = "dbg-sample"
	KeyDbgOnDefault          = "dbg-on-default"
	KeyDbgOff                = "dbg-off"
	KeyDbgGenerate           = "dbg-generate"
	KeyDbgStop               = "dbg-stop"
	KeyDbgStopTitle          = "dbg-stop-title"
	KeyDbgCompareRuns        = "dbg-compare-runs"
	KeyDbgCompare            = "dbg-compare"
	KeyDbgCompareModel       = "dbg-compare-model"
	KeyDbgCompareModelNone   = "dbg-compare-model-none"
	KeyDbgCompareQuantized   = "dbg-compare-quantized"
	KeyDbgCompareQuantizedTo = "dbg-compare-quantized-to"
	KeyDbgCompareFiles       = "dbg-compare-files"
	KeyDbgQuantize           = "dbg-quantize"
	KeyDbgQuantizeNone       = "dbg-quantize-none"
	KeyDbgQuantizeTitle      = "dbg-quantize-title"
	KeyDbgFirst              = "dbg-first"
	KeyDbgFirstTitle         = "dbg-first-title"
	KeyDbgPrev               = "dbg-prev"
	KeyDbgPrevTitle          = "dbg-prev-title"
	KeyDbgPlay               = "dbg-play"
	KeyDbgPlayTitle          = "dbg-play-title"
	KeyDbgNext               = "dbg-next"
	KeyDbgNextTitle          = "dbg-next-title"
	KeyDbgLast               = "dbg-last"
	KeyDbgLastTitle          = "dbg-last-title"
	KeyDbgMore               = "dbg-more"
	KeyDbgMoreTitle          = "dbg-more-title"
	KeyDbgPaneSwitch         = "dbg-pane-switch"
	KeyDbgPaneTable          = "dbg-pane-table"
	KeyDbgPaneCode           = "dbg-pane-code"
	KeyDbgBranch             = "dbg-branch"
	KeyDbgBranchPlaceholder  = "dbg-branch-placeholder"
	KeyDbgBranchTitle        = "dbg-branch-title"
	KeyDbgBranchGoTitle      = "dbg-branch-go-title"
	KeyDbgBranchCandidate    = "dbg-branch-candidate"
	KeyDbgBreakpoints        = "dbg-breakpoints"
	KeyDbgEntersTop          = "dbg-enters-top"
	KeyDbgWordOrId           = "dbg-word-or-id"
	KeyDbgRunToBreakpoint    = "dbg-run-to-breakpoint"
	KeyDbgPair               = "dbg-pair"
	KeyDbgPairTitle          = "dbg-pair-title"
	KeyDbgCharts             = "dbg-charts"
	KeyDbgChartsTitle        = "dbg-charts-title"
	KeyDbgKeys               = "dbg-keys"
	KeyDbgKeyPrev            = "dbg-key-prev"
	KeyDbgKeyNext            = "dbg-key-next"
	KeyDbgKeyPlay            = "dbg-key-play"
	KeyDbgKeyFirst           = "dbg-key-first"
	KeyDbgKeyLast            = "dbg-key-last"
	KeyDbgKeyForm            = "dbg-key-form"
	KeyDbgKeyStop            = "dbg-key-stop"
	KeyDbgKeyBranch          = "dbg-key-branch"
	KeyDbgKeyBreakpoints     = "dbg-key-breakpoints"
	KeyDbgKeyPair            = "dbg-key-pair"
	KeyDbgKeyCharts          = "dbg-key-charts"
	KeyDbgKeyDetach          = "dbg-key-detach"
	KeyDbgNoStep             = "dbg-no-step"
	KeyDbgStopReason         = "dbg-stop-reason"
	KeyDbgChosen             = "dbg-chosen"
	KeyDbgLegendRaw          = "dbg-legend-raw"
	KeyDbgLegendFinal        = "dbg-legend-final"
	KeyDbgFollowing          = "dbg-following"
	KeyDbgClassRecall        = "dbg-class-recall"
	KeyDbgClassPreview       = "dbg-class-preview"
	KeyDbgProjector          = "dbg-projector"
	KeyDbgClassStatus        = "dbg-class-status"
	KeyDbgQueued             = "dbg-queued"
	KeyDbgClassBehind        = "dbg-class-behind"
	KeyDbgClassCaughtUp      = "dbg-class-caught-up"
	KeyDbgClassAhead         = "dbg-class-ahead"
	KeyDbgClassDash          = "dbg-class-dash"
	KeyDbgClassJoin          = "dbg-class-join"
	KeyDbgClassQR            = "dbg-class-qr"
	KeyDbgClassQuiz          = "dbg-class-quiz"
	KeyDbgClassQuizNone      = "dbg-class-quiz-none"
	KeyDbgClassQuizTotal     = "dbg-class-quiz-total"
	KeyDbgClassQuizCorrect   = "dbg-class-quiz-correct"
	KeyDbgDetach             = "dbg-detach"
	KeyDbgDetachRest         = "dbg-detach-rest"
	KeyDbgExploring          = "dbg-exploring"
	KeyDbgRejoin             = "dbg-rejoin"
	KeyDbgRejoinRest         = "dbg-rejoin-rest"
	KeyDbgWalkStatus         = "dbg-walk-status"
	KeyDbgTokens             = "dbg-tokens"
	KeyDbgNoForward          = "dbg-no-forward"
	KeyDbgTheChoice          = "dbg-the-choice"
	KeyDbgFunnel             = "dbg-funnel"
	KeyDbgDraw               = "dbg-draw"
	KeyDbgTokenizer          = "dbg-tokenizer"
	KeyDbgKvCache            = "dbg-kv-cache"
	KeyDbgTraffic            = "dbg-traffic"
	KeyDbgToySide            = "dbg-toy-side"
	KeyDbgBranches           = "dbg-branches"
	KeyDbgChartsHeading      = "dbg-charts-heading"
	KeyDbgCompareHeading     = "dbg-compare-heading"
	KeyDbgStepSoFar          = "dbg-step-so-far"
	KeyDbgNoSteps            = "dbg-no-steps"
	KeyDbgWaiting            = "dbg-waiting"
	KeyDbgFailedNoSteps      = "dbg-failed-no-steps"
	KeyDbgNSteps             = "dbg-n-steps"
	KeyDbgOneStep            = "dbg-one-step"
	KeyDbgStatusRunning      = "dbg-status-running"
	KeyDbgStatusFailed       = "dbg-status-failed"
	KeyDbgStatusStopped      = "dbg-status-stopped"
	KeyDbgStatusImported     = "dbg-status-imported"
	KeyDbgStatusDone         = "dbg-status-done"
	KeyDbgContext            = "dbg-context"
	KeyDbgBatchNote          = "dbg-batch-note"
	KeyDbgFinishedNote       = "dbg-finished-note"
	KeyDbgToyStep            = "dbg-toy-step"
	KeyDbgRank               = "dbg-rank"
	KeyDbgToken              = "dbg-token"
	KeyDbgDrawExplain        = "dbg-draw-explain"
	KeyDbgBytes              = "dbg-bytes"
	KeyDbgHeldBack           = "dbg-held-back"
	KeyDbgPromptTokens       = "dbg-prompt-tokens"
	KeyDbgPositions          = "dbg-positions"
	KeyDbgLayer              = "dbg-layer"
	KeyDbgTimeIs             = "dbg-time-is"
	KeyDbgWeightsRead        = "dbg-weights-read"
	KeyDbgKvReadWritten      = "dbg-kv-read-written"
	KeyDbgArithmetic         = "dbg-arithmetic"
	KeyDbgIntensity          = "dbg-intensity"
	KeyDbgTime               = "dbg-time"
	KeyDbgAchieved           = "dbg-achieved"
	KeyDbgMachineBandwidth   = "dbg-machine-bandwidth"
	KeyDbgMemoryCache        = "dbg-memory-cache"
	KeyDbgMemoryDRAM         = "dbg-memory-dram"
	KeyDbgTrafficResident    = "dbg-traffic-resident"
	KeyDbgTrafficFromDRAM    = "dbg-traffic-from-dram"
	KeyDbgProbeNote          = "dbg-probe-note"
	KeyDbgPullLabel          = "dbg-pull-label"
	KeyDbgPullButton         = "dbg-pull-button"
	KeyDbgPullStarted        = "dbg-pull-started"
	KeyDbgPullDone           = "dbg-pull-done"
	KeyDbgRunning            = "dbg-running"
	KeyDbgRun                = "dbg-run"
	KeyDbgTvTitle            = "dbg-tv-title"
	KeyDbgExportRun          = "dbg-export-run"
	KeyDbgForward            = "dbg-forward"
	KeyDbgForwardAt          = "dbg-forward-at"
	KeyDbgForwardNote        = "dbg-forward-note"
	KeyDbgForwardEmbed       = "dbg-forward-embed"
	KeyDbgForwardLayer       = "dbg-forward-layer"
	KeyDbgForwardOpen        = "dbg-forward-open"
	KeyDbgForwardIn          = "dbg-forward-in"
	KeyDbgForwardMid         = "dbg-forward-mid"
	KeyDbgForwardOut         = "dbg-forward-out"
	KeyDbgForwardAttn        = "dbg-forward-attn"
	KeyDbgForwardMlp         = "dbg-forward-mlp"
	KeyDbgForwardHeads       = "dbg-forward-heads"
	KeyDbgForwardNeurons     = "dbg-forward-neurons"
	KeyDbgForwardFinal       = "dbg-forward-final"
	KeyDbgForwardUnembed     = "dbg-forward-unembed"
	KeyDbgForwardRead        = "dbg-forward-read"
	KeyDbgFunnelRaw          = "dbg-funnel-raw"
	KeyDbgFunnelFate         = "dbg-funnel-fate"
	KeyDbgFunnelRemovedBy    = "dbg-funnel-removed-by"
	KeyDbgFunnelSurvived     = "dbg-funnel-survived"
	KeyDbgFunnelForced       = "dbg-funnel-forced"
	KeyDbgExplainGreedy      = "dbg-explain-greedy"
	KeyDbgExplainSample      = "dbg-explain-sample"
	KeyDbgExplainForced      = "dbg-explain-forced"
	KeyDbgExplainBeam        = "dbg-explain-beam"
	KeyDbgKvNone             = "dbg-kv-none"
	KeyDbgKvSince            = "dbg-kv-since"
	KeyDbgKvPrefill          = "dbg-kv-prefill"
	KeyDbgTrafficNone        = "dbg-traffic-none"
	KeyDbgTrafficBatch       = "dbg-traffic-batch"
	KeyDbgUnknown            = "dbg-unknown"
	KeyDbgTokNone            = "dbg-tok-none"
	KeyDbgTokBytesOnly       = "dbg-tok-bytes-only"
	KeyDbgOneByte            = "dbg-one-byte"
	KeyDbgNBytes             = "dbg-n-bytes"
	KeyDbgTokHeld            = "dbg-tok-held"
	KeyDbgTokSpecial         = "dbg-tok-special"
	KeyDbgTokAdds            = "dbg-tok-adds"
	KeyDbgBpTop1             = "dbg-bp-top1"
	KeyDbgUntilRaw           = "dbg-until-raw"
	KeyDbgBpRank             = "dbg-bp-rank"
	KeyDbgBpEntropy          = "dbg-bp-entropy"
	KeyDbgBpEnters           = "dbg-bp-enters"
	KeyDbgBpOr               = "dbg-bp-or"
	KeyDbgHitTop1            = "dbg-hit-top1"
	KeyDbgHitRank            = "dbg-hit-rank"
	KeyDbgHitEntropy         = "dbg-hit-entropy"
	KeyDbgHitEntered         = "dbg-hit-entered"
	KeyDbgHit                = "dbg-hit"
	KeyDbgPlayingUntil       = "dbg-playing-until"
	KeyDbgNoHit              = "dbg-no-hit"
	KeyDbgCmpRunning         = "dbg-cmp-running"
	KeyDbgCmpDone            = "dbg-cmp-done"
	KeyDbgCmpStopped         = "dbg-cmp-stopped"
	KeyDbgCmpSame            = "dbg-cmp-same"
	KeyDbgCmpStoppedPick     = "dbg-cmp-stopped-pick"
	KeyDbgCmpChose           = "dbg-cmp-chose"
	KeyDbgCmpDiffer          = "dbg-cmp-differ"
	KeyDbgRowN               = "dbg-row-n"
	KeyDbgBeamN              = "dbg-beam-n"
	KeyDbgMsgFailed          = "dbg-msg-failed"
	KeyDbgMsgStatus          = "dbg-msg-status"
	KeyDbgMsgUnreachable     = "dbg-msg-unreachable"
)

// Debugger keys of the classroom roles, the what-if panel, the download
// advice and the translated chosen line, chart titles and run sources.
const (
	KeyDbgRunLocked       = "dbg-run-locked"
	KeyDbgNoRealModel     = "dbg-no-real-model"
	KeyDbgByGreedy        = "dbg-by-greedy"
	KeyDbgBySampled       = "dbg-by-sampled"
	KeyDbgByForced        = "dbg-by-forced"
	KeyDbgByBeam          = "dbg-by-beam"
	KeyDbgChosenLine      = "dbg-chosen-line"
	KeyDbgDrawFell        = "dbg-draw-fell"
	KeyDbgChartCandidates = "dbg-chart-candidates"
	KeyDbgChartConfidence = "dbg-chart-confidence"
	KeyDbgChartKv         = "dbg-chart-kv"
	KeyDbgChartCost       = "dbg-chart-cost"
	KeyDbgSrcRun          = "dbg-src-run"
	KeyDbgSrcCompare      = "dbg-src-compare"
	KeyDbgSrcImported     = "dbg-src-imported"
	KeyDbgSrcCopy         = "dbg-src-copy"
	KeyDbgHowGreedy       = "dbg-how-greedy"
	KeyDbgHowSampled      = "dbg-how-sampled"
	KeyDbgHowBeam         = "dbg-how-beam"
	KeyDbgWhatIf          = "dbg-whatif"
	KeyDbgWhatIfHint      = "dbg-whatif-hint"
	KeyDbgWhatIfBranch    = "dbg-whatif-branch"
	KeyDbgWhatIfReset     = "dbg-whatif-reset"
	KeyDbgWhatIfPartial   = "dbg-whatif-partial"
	KeyDbgWhatIfNoDraw    = "dbg-whatif-no-draw"
	KeyDbgWhatIfChoice    = "dbg-whatif-choice"
	KeyDbgWhatIfCompare   = "dbg-whatif-compare"
	KeyDbgWhatIfBeams     = "dbg-whatif-beams"
	KeyDbgWhatIfNoStep    = "dbg-whatif-no-step"
)

// Keys of the step view: the text so far, visible whitespace, logits,
// the beam tree and the KV panel without a cache.
const (
	KeyDbgTextSoFar      = "dbg-text-so-far"
	KeyDbgTintLegend     = "dbg-tint-legend"
	KeyDbgTextHelp       = "dbg-text-help"
	KeyDbgWsLegend       = "dbg-ws-legend"
	KeyDbgLogit          = "dbg-logit"
	KeyDbgLogitRaw       = "dbg-logit-raw"
	KeyDbgLogitProcessed = "dbg-logit-processed"
	KeyDbgKvOffWhy       = "dbg-kv-off-why"
	KeyDbgBeams          = "dbg-beams"
	KeyDbgBeamsNote      = "dbg-beams-note"
	KeyDbgBeamsFinished  = "dbg-beams-finished"
	KeyDbgBeamsNone      = "dbg-beams-none"
	KeyDbgBeamsWinner    = "dbg-beams-winner"
	KeyDbgBeamsPruned    = "dbg-beams-pruned"
	KeyDbgBeamsOpen      = "dbg-beams-open"
	KeyDbgBeamsScore     = "dbg-beams-score"
	KeyDbgBeamsSum       = "dbg-beams-sum"
	KeyDbgBeamsLength    = "dbg-beams-length"
	KeyDbgBeamsLegend    = "dbg-beams-legend"
	KeyDbgBeamsEnd       = "dbg-beams-end"
)

// Keys of the words the charts draw (web/plots.Words, one key a field),
// and of the Branch box's error for a malformed quoted token.
const (
	KeyDbgPlotProbability    = "dbg-plot-probability"
	KeyDbgPlotRawP           = "dbg-plot-raw-p"
	KeyDbgPlotFinalP         = "dbg-plot-final-p"
	KeyDbgPlotChosen         = "dbg-plot-chosen"
	KeyDbgPlotRemoved        = "dbg-plot-removed"
	KeyDbgPlotStepChose      = "dbg-plot-step-chose"
	KeyDbgPlotHowPicked      = "dbg-plot-how-picked"
	KeyDbgPlotHowPlain       = "dbg-plot-how-plain"
	KeyDbgPlotGreedy         = "dbg-plot-greedy"
	KeyDbgPlotSampled        = "dbg-plot-sampled"
	KeyDbgPlotBeam           = "dbg-plot-beam"
	KeyDbgPlotForced         = "dbg-plot-forced"
	KeyDbgPlotStep           = "dbg-plot-step"
	KeyDbgPlotStepN          = "dbg-plot-step-n"
	KeyDbgPlotTop1           = "dbg-plot-top1"
	KeyDbgPlotEntropy        = "dbg-plot-entropy"
	KeyDbgPlotTop1Raw        = "dbg-plot-top1-raw"
	KeyDbgPlotChosenFinal    = "dbg-plot-chosen-final"
	KeyDbgPlotConfidenceOver = "dbg-plot-confidence-over"
	KeyDbgPlotConfidenceAt   = "dbg-plot-confidence-at"
	KeyDbgPlotKVAxis         = "dbg-plot-kv-axis"
	KeyDbgPlotKVOver         = "dbg-plot-kv-over"
	KeyDbgPlotKVHeld         = "dbg-plot-kv-held"
	KeyDbgPlotKVAt           = "dbg-plot-kv-at"
	KeyDbgPlotMoved          = "dbg-plot-moved"
	KeyDbgPlotCompute        = "dbg-plot-compute"
	KeyDbgPlotTime           = "dbg-plot-time"
	KeyDbgPlotCostOver       = "dbg-plot-cost-over"
	KeyDbgPlotCostAt         = "dbg-plot-cost-at"
	KeyDbgPlotPrefill        = "dbg-plot-prefill"
	KeyDbgPlotDecode         = "dbg-plot-decode"
	KeyDbgPlotFull           = "dbg-plot-full"
	KeyDbgPlotCacheOn        = "dbg-plot-cache-on"
	KeyDbgPlotCacheOff       = "dbg-plot-cache-off"
	KeyDbgPlotRunN           = "dbg-plot-run-n"
	KeyDbgBranchQuoted       = "dbg-branch-quoted"
)

// PlotKeys lists the chart words' keys.
func PlotKeys() []string {
	return []string{
		KeyDbgPlotProbability,
		KeyDbgPlotRawP,
		KeyDbgPlotFinalP,
		KeyDbgPlotChosen,
		KeyDbgPlotRemoved,
		KeyDbgPlotStepChose,
		KeyDbgPlotHowPicked,
		KeyDbgPlotHowPlain,
		KeyDbgPlotGreedy,
		KeyDbgPlotSampled,
		KeyDbgPlotBeam,
		KeyDbgPlotForced,
		KeyDbgPlotStep,
		KeyDbgPlotStepN,
		KeyDbgPlotTop1,
		KeyDbgPlotEntropy,
		KeyDbgPlotTop1Raw,
		KeyDbgPlotChosenFinal,
		KeyDbgPlotConfidenceOver,
		KeyDbgPlotConfidenceAt,
		KeyDbgPlotKVAxis,
		KeyDbgPlotKVOver,
		KeyDbgPlotKVHeld,
		KeyDbgPlotKVAt,
		KeyDbgPlotMoved,
		KeyDbgPlotCompute,
		KeyDbgPlotTime,
		KeyDbgPlotCostOver,
		KeyDbgPlotCostAt,
		KeyDbgPlotPrefill,
		KeyDbgPlotDecode,
		KeyDbgPlotFull,
		KeyDbgPlotCacheOn,
		KeyDbgPlotCacheOff,
		KeyDbgPlotRunN,
	}
}

// Keys lists every debugger key constant, for Load.
func Keys() []string {
	return append([]string{
		KeyDbgTagline,
		KeyDbgImport,
		KeyDbgImportTitle,
		KeyDbgOpen,
		KeyDbgExport,
		KeyDbgStepping,
		KeyDbgRunModel,
		KeyDbgPromptAs,
		KeyDbgAsText,
		KeyDbgAsIds,
		KeyDbgAsChat,
		KeyDbgPadding,
		KeyDbgPaddingTitle,
		KeyDbgLeft,
		KeyDbgRightPitfall,
		KeyDbgPromptHint,
		KeyDbgSystemPrompt,
		KeyDbgChatOptional,
		KeyDbgOptions,
		KeyDbgOptionsHint,
		KeyDbgDecoding,
		KeyDbgModelDefault,
		KeyDbgGreedy,
		KeyDbgSample,
		KeyDbgOnDefault,
		KeyDbgOff,
		KeyDbgGenerate,
		KeyDbgStop,
		KeyDbgStopTitle,
		KeyDbgCompareRuns,
		KeyDbgCompare,
		KeyDbgCompareModel,
		KeyDbgCompareModelNone, KeyDbgCompareQuantized, KeyDbgCompareQuantizedTo, KeyDbgCompareFiles, KeyDbgQuantize, KeyDbgQuantizeNone, KeyDbgQuantizeTitle,
		KeyDbgFirst,
		KeyDbgFirstTitle,
		KeyDbgPrev,
		KeyDbgPrevTitle,
		KeyDbgPlay,
		KeyDbgPlayTitle,
		KeyDbgNext,
		KeyDbgNextTitle,
		KeyDbgLast,
		KeyDbgLastTitle,
		KeyDbgMore,
		KeyDbgMoreTitle,
		KeyDbgPaneSwitch,
		KeyDbgPaneTable,
		KeyDbgPaneCode,
		KeyDbgBranch,
		KeyDbgBranchPlaceholder,
		KeyDbgBranchTitle,
		KeyDbgBranchGoTitle,
		KeyDbgBranchCandidate,
		KeyDbgBreakpoints,
		KeyDbgEntersTop,
		KeyDbgWordOrId,
		KeyDbgRunToBreakpoint,
		KeyDbgPair,
		KeyDbgPairTitle,
		KeyDbgCharts,
		KeyDbgChartsTitle,
		KeyDbgKeys,
		KeyDbgKeyPrev,
		KeyDbgKeyNext,
		KeyDbgKeyPlay,
		KeyDbgKeyFirst,
		KeyDbgKeyLast,
		KeyDbgKeyForm,
		KeyDbgKeyStop,
		KeyDbgKeyBranch,
		KeyDbgKeyBreakpoints,
		KeyDbgKeyPair,
		KeyDbgKeyCharts,
		KeyDbgKeyDetach,
		KeyDbgNoStep,
		KeyDbgStopReason,
		KeyDbgChosen,
		KeyDbgLegendRaw,
		KeyDbgLegendFinal,
		KeyDbgFollowing, KeyDbgQueued, KeyDbgClassStatus, KeyDbgClassRecall, KeyDbgClassPreview, KeyDbgProjector, KeyDbgClassBehind, KeyDbgClassCaughtUp, KeyDbgClassAhead,
		KeyDbgClassDash, KeyDbgClassJoin, KeyDbgClassQR, KeyDbgClassQuiz, KeyDbgClassQuizNone, KeyDbgClassQuizTotal, KeyDbgClassQuizCorrect,
		KeyDbgDetach,
		KeyDbgDetachRest,
		KeyDbgExploring,
		KeyDbgRejoin,
		KeyDbgRejoinRest,
		KeyDbgWalkStatus,
		KeyDbgTokens,
		KeyDbgNoForward,
		KeyDbgTheChoice,
		KeyDbgFunnel,
		KeyDbgDraw,
		KeyDbgTokenizer,
		KeyDbgKvCache,
		KeyDbgTraffic,
		KeyDbgToySide,
		KeyDbgBranches,
		KeyDbgChartsHeading,
		KeyDbgCompareHeading,
		KeyDbgStepSoFar,
		KeyDbgNoSteps,
		KeyDbgWaiting,
		KeyDbgFailedNoSteps,
		KeyDbgNSteps,
		KeyDbgOneStep,
		KeyDbgStatusRunning,
		KeyDbgStatusFailed,
		KeyDbgStatusStopped,
		KeyDbgStatusImported,
		KeyDbgStatusDone,
		KeyDbgContext,
		KeyDbgBatchNote,
		KeyDbgFinishedNote,
		KeyDbgToyStep,
		KeyDbgRank,
		KeyDbgToken,
		KeyDbgDrawExplain,
		KeyDbgBytes,
		KeyDbgHeldBack,
		KeyDbgPromptTokens,
		KeyDbgPositions,
		KeyDbgLayer,
		KeyDbgTimeIs,
		KeyDbgWeightsRead,
		KeyDbgKvReadWritten,
		KeyDbgArithmetic,
		KeyDbgIntensity,
		KeyDbgTime,
		KeyDbgAchieved,
		KeyDbgMachineBandwidth,
		KeyDbgMemoryCache,
		KeyDbgMemoryDRAM,
		KeyDbgTrafficResident,
		KeyDbgTrafficFromDRAM,
		KeyDbgProbeNote,
		KeyDbgPullLabel,
		KeyDbgPullButton,
		KeyDbgPullStarted,
		KeyDbgPullDone,
		KeyDbgRunning,
		KeyDbgRun,
		KeyDbgTvTitle,
		KeyDbgExportRun,
		KeyDbgForward,
		KeyDbgForwardAt,
		KeyDbgForwardNote,
		KeyDbgForwardEmbed,
		KeyDbgForwardLayer,
		KeyDbgForwardOpen,
		KeyDbgForwardIn,
		KeyDbgForwardMid,
		KeyDbgForwardOut,
		KeyDbgForwardAttn,
		KeyDbgForwardMlp,
		KeyDbgForwardHeads,
		KeyDbgForwardNeurons,
		KeyDbgForwardFinal,
		KeyDbgForwardUnembed,
		KeyDbgForwardRead,
		KeyDbgFunnelRaw,
		KeyDbgFunnelFate,
		KeyDbgFunnelRemovedBy,
		KeyDbgFunnelSurvived,
		KeyDbgFunnelForced,
		KeyDbgExplainGreedy,
		KeyDbgExplainSample,
		KeyDbgExplainForced,
		KeyDbgExplainBeam,
		KeyDbgKvNone,
		KeyDbgKvSince,
		KeyDbgKvPrefill,
		KeyDbgTrafficNone,
		KeyDbgTrafficBatch,
		KeyDbgUnknown,
		KeyDbgTokNone,
		KeyDbgTokBytesOnly,
		KeyDbgOneByte,
		KeyDbgNBytes,
		KeyDbgTokHeld,
		KeyDbgTokSpecial,
		KeyDbgTokAdds,
		KeyDbgBpTop1,
		KeyDbgUntilRaw,
		KeyDbgBpRank,
		KeyDbgBpEntropy,
		KeyDbgBpEnters,
		KeyDbgBpOr,
		KeyDbgHitTop1,
		KeyDbgHitRank,
		KeyDbgHitEntropy,
		KeyDbgHitEntered,
		KeyDbgHit,
		KeyDbgPlayingUntil,
		KeyDbgNoHit,
		KeyDbgCmpRunning,
		KeyDbgCmpDone,
		KeyDbgCmpStopped,
		KeyDbgCmpSame,
		KeyDbgCmpStoppedPick,
		KeyDbgCmpChose,
		KeyDbgCmpDiffer,
		KeyDbgRowN,
		KeyDbgBeamN,
		KeyDbgMsgFailed,
		KeyDbgMsgStatus,
		KeyDbgMsgUnreachable,
		// The attention and logit-lens panels (web/inside.go).
		KeyDbgAttention,
		KeyDbgAttnExplain,
		KeyDbgAttnGrid,
		KeyDbgAttnAll,
		KeyDbgAttnHead,
		KeyDbgAttnLayer,
		KeyDbgLens,
		KeyDbgLensExplain,
		KeyDbgLensSettled,
		KeyDbgLensWavers,
		KeyDbgLensNever,
		KeyDbgInsideNoAttention,
		KeyDbgInsideNoLens,
		KeyDbgInsideNotRecorded,
		KeyDbgInsideTooBig,
		KeyDbgInsideServer,
		KeyDbgInsideStepNone,
		KeyDbgInsideComputing,
		KeyDbgInsideAfterRun,
		KeyDbgInsideFailed,
		KeyDbgRunLocked,
		KeyDbgNoRealModel,
		KeyDbgByGreedy,
		KeyDbgBySampled,
		KeyDbgByForced,
		KeyDbgByBeam,
		KeyDbgChosenLine,
		KeyDbgDrawFell,
		KeyDbgChartCandidates,
		KeyDbgChartConfidence,
		KeyDbgChartKv,
		KeyDbgChartCost,
		KeyDbgSrcRun,
		KeyDbgSrcCompare,
		KeyDbgSrcImported,
		KeyDbgSrcCopy,
		KeyDbgHowGreedy,
		KeyDbgHowSampled,
		KeyDbgHowBeam,
		KeyDbgWhatIf,
		KeyDbgWhatIfHint,
		KeyDbgWhatIfBranch,
		KeyDbgWhatIfReset,
		KeyDbgWhatIfPartial,
		KeyDbgWhatIfNoDraw,
		KeyDbgWhatIfChoice,
		KeyDbgWhatIfCompare,
		KeyDbgWhatIfBeams,
		KeyDbgWhatIfNoStep,
		KeyDbgTextSoFar,
		KeyDbgTintLegend,
		KeyDbgTextHelp,
		KeyDbgWsLegend,
		KeyDbgLogit,
		KeyDbgLogitRaw,
		KeyDbgLogitProcessed,
		KeyDbgKvOffWhy,
		KeyDbgBeams,
		KeyDbgBeamsNote,
		KeyDbgBeamsFinished,
		KeyDbgBeamsNone,
		KeyDbgBeamsWinner,
		KeyDbgBeamsPruned,
		KeyDbgBeamsOpen,
		KeyDbgBeamsScore,
		KeyDbgBeamsSum,
		KeyDbgBeamsLength,
		KeyDbgBeamsLegend,
		KeyDbgBeamsEnd,
		KeyDbgBranchQuoted,
		KeyDbgServerFunnel,
		KeyDbgServerKv,
		KeyDbgServerTraffic,
		KeyDbgServerInside,
		KeyDbgServerMissing,
	}, append(PlotKeys(), PlaygroundKeys()...)...)
}

// The keys of what a model on a serving engine cannot show
// (web/serverpanels.go).
const (
	KeyDbgServerFunnel  = "dbg-server-funnel"
	KeyDbgServerKv      = "dbg-server-kv"
	KeyDbgServerTraffic = "dbg-server-traffic"
	KeyDbgServerInside  = "dbg-server-inside"
	KeyDbgServerMissing = "dbg-server-missing"
)

// The keys of the attention and logit-lens panels (web/inside.go).
const (
	KeyDbgAttention         = "dbg-attention"
	KeyDbgAttnExplain       = "dbg-attn-explain"
	KeyDbgAttnGrid          = "dbg-attn-grid"
	KeyDbgAttnAll           = "dbg-attn-all"
	KeyDbgAttnHead          = "dbg-attn-head"
	KeyDbgAttnLayer         = "dbg-attn-layer"
	KeyDbgLens              = "dbg-lens"
	KeyDbgLensExplain       = "dbg-lens-explain"
	KeyDbgLensSettled       = "dbg-lens-settled"
	KeyDbgLensWavers        = "dbg-lens-wavers"
	KeyDbgLensNever         = "dbg-lens-never"
	KeyDbgInsideNoAttention = "dbg-inside-no-attention"
	KeyDbgInsideNoLens      = "dbg-inside-no-lens"
	KeyDbgInsideNotRecorded = "dbg-inside-not-recorded"
	KeyDbgInsideTooBig      = "dbg-inside-too-big"
	KeyDbgInsideServer      = "dbg-inside-server"
	KeyDbgInsideStepNone    = "dbg-inside-step-none"
	KeyDbgInsideComputing   = "dbg-inside-computing"
	KeyDbgInsideAfterRun    = "dbg-inside-after-run"
	KeyDbgInsideFailed      = "dbg-inside-failed"
)

// The keys of the tokenizer playground (web/playground, /tokenize).
const (
	KeyPgTitle        = "pg-title"
	KeyPgIntro        = "pg-intro"
	KeyPgText         = "pg-text"
	KeyPgModel        = "pg-model"
	KeyPgModel2       = "pg-model2"
	KeyPgNone         = "pg-none"
	KeyPgSubmit       = "pg-submit"
	KeyPgLimit        = "pg-limit"
	KeyPgSample       = "pg-sample"
	KeyPgHint         = "pg-hint"
	KeyPgSize         = "pg-size"
	KeyPgLegend       = "pg-legend"
	KeyPgCount        = "pg-count"
	KeyPgCountOne     = "pg-count-one"
	KeyPgEach         = "pg-each"
	KeyPgMore         = "pg-more"
	KeyPgBytes        = "pg-bytes"
	KeyPgVocab        = "pg-vocab"
	KeyPgUnits        = "pg-units"
	KeyPgHowMerged    = "pg-how-merged"
	KeyPgHowMergedOne = "pg-how-merged-one"
	KeyPgHowSingle    = "pg-how-single"
	KeyPgHowByte      = "pg-how-byte"
	KeyPgHowAdded     = "pg-how-added"
	KeyPgHowWhole     = "pg-how-whole"
	KeyPgHowUnk       = "pg-how-unk"
	KeyPgHowUnknown   = "pg-how-unknown"
	KeyPgRank         = "pg-rank"
	KeyPgScore        = "pg-score"
	KeyPgToy          = "pg-toy"
	KeyPgNoTokenizer  = "pg-no-tokenizer"
	KeyPgServer       = "pg-server"
	KeyPgOpenFailed   = "pg-open-failed"
	KeyPgEncodeFailed = "pg-encode-failed"
	KeyPgTooLong      = "pg-too-long"
	KeyPgQueryTooLong = "pg-query-too-long"
	KeyPgUnknownModel = "pg-unknown-model"
	KeyPgBusy         = "pg-busy"
)

// PlaygroundKeys lists the tokenizer playground's keys.
func PlaygroundKeys() []string {
	return []string{
		KeyPgTitle,
		KeyPgIntro,
		KeyPgText,
		KeyPgModel,
		KeyPgModel2,
		KeyPgNone,
		KeyPgSubmit,
		KeyPgLimit,
		KeyPgSample,
		KeyPgHint,
		KeyPgSize,
		KeyPgLegend,
		KeyPgCount,
		KeyPgCountOne,
		KeyPgEach,
		KeyPgMore,
		KeyPgBytes,
		KeyPgVocab,
		KeyPgUnits,
		KeyPgHowMerged,
		KeyPgHowMergedOne,
		KeyPgHowSingle,
		KeyPgHowByte,
		KeyPgHowAdded,
		KeyPgHowWhole,
		KeyPgHowUnk,
		KeyPgHowUnknown,
		KeyPgRank,
		KeyPgScore,
		KeyPgToy,
		KeyPgNoTokenizer,
		KeyPgServer,
		KeyPgOpenFailed,
		KeyPgEncodeFailed,
		KeyPgTooLong,
		KeyPgQueryTooLong,
		KeyPgUnknownModel,
		KeyPgBusy,
	}
}
