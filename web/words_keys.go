package web

// The keys of the debugger page's own wording (data/words.json), beside the
// lessons' words it shares (lessons.Key...). loadWords fails when words.json
// lacks one of them or a language lacks its text. Texts with {placeholders}
// go through Words.F.
const (
	keyDbgTagline           = "dbg-tagline"
	keyDbgImport            = "dbg-import"
	keyDbgImportTitle       = "dbg-import-title"
	keyDbgOpen              = "dbg-open"
	keyDbgExport            = "dbg-export"
	keyDbgStepping          = "dbg-stepping"
	keyDbgRunModel          = "dbg-run-model"
	keyDbgPromptAs          = "dbg-prompt-as"
	keyDbgAsText            = "dbg-as-text"
	keyDbgAsIds             = "dbg-as-ids"
	keyDbgAsChat            = "dbg-as-chat"
	keyDbgPadding           = "dbg-padding"
	keyDbgPaddingTitle      = "dbg-padding-title"
	keyDbgLeft              = "dbg-left"
	keyDbgRightPitfall      = "dbg-right-pitfall"
	keyDbgPromptHint        = "dbg-prompt-hint"
	keyDbgSystemPrompt      = "dbg-system-prompt"
	keyDbgChatOptional      = "dbg-chat-optional"
	keyDbgOptions           = "dbg-options"
	keyDbgOptionsHint       = "dbg-options-hint"
	keyDbgDecoding          = "dbg-decoding"
	keyDbgModelDefault      = "dbg-model-default"
	keyDbgGreedy            = "dbg-greedy"
	keyDbgSample            = "dbg-sample"
	keyDbgOnDefault         = "dbg-on-default"
	keyDbgOff               = "dbg-off"
	keyDbgGenerate          = "dbg-generate"
	keyDbgStop              = "dbg-stop"
	keyDbgStopTitle         = "dbg-stop-title"
	keyDbgCompareRuns       = "dbg-compare-runs"
	keyDbgCompare           = "dbg-compare"
	keyDbgCompareModel      = "dbg-compare-model"
	keyDbgCompareModelNone  = "dbg-compare-model-none"
	keyDbgFirst             = "dbg-first"
	keyDbgFirstTitle        = "dbg-first-title"
	keyDbgPrev              = "dbg-prev"
	keyDbgPrevTitle         = "dbg-prev-title"
	keyDbgPlay              = "dbg-play"
	keyDbgPlayTitle         = "dbg-play-title"
	keyDbgNext              = "dbg-next"
	keyDbgNextTitle         = "dbg-next-title"
	keyDbgLast              = "dbg-last"
	keyDbgLastTitle         = "dbg-last-title"
	keyDbgBranch            = "dbg-branch"
	keyDbgBranchPlaceholder = "dbg-branch-placeholder"
	keyDbgBranchTitle       = "dbg-branch-title"
	keyDbgBranchGoTitle     = "dbg-branch-go-title"
	keyDbgBranchCandidate   = "dbg-branch-candidate"
	keyDbgBreakpoints       = "dbg-breakpoints"
	keyDbgEntersTop         = "dbg-enters-top"
	keyDbgWordOrId          = "dbg-word-or-id"
	keyDbgRunToBreakpoint   = "dbg-run-to-breakpoint"
	keyDbgPair              = "dbg-pair"
	keyDbgPairTitle         = "dbg-pair-title"
	keyDbgCharts            = "dbg-charts"
	keyDbgChartsTitle       = "dbg-charts-title"
	keyDbgKeys              = "dbg-keys"
	keyDbgKeyPrev           = "dbg-key-prev"
	keyDbgKeyNext           = "dbg-key-next"
	keyDbgKeyPlay           = "dbg-key-play"
	keyDbgKeyFirst          = "dbg-key-first"
	keyDbgKeyLast           = "dbg-key-last"
	keyDbgKeyForm           = "dbg-key-form"
	keyDbgKeyStop           = "dbg-key-stop"
	keyDbgKeyBranch         = "dbg-key-branch"
	keyDbgKeyBreakpoints    = "dbg-key-breakpoints"
	keyDbgKeyPair           = "dbg-key-pair"
	keyDbgKeyCharts         = "dbg-key-charts"
	keyDbgKeyDetach         = "dbg-key-detach"
	keyDbgNoStep            = "dbg-no-step"
	keyDbgStopReason        = "dbg-stop-reason"
	keyDbgChosen            = "dbg-chosen"
	keyDbgLegendRaw         = "dbg-legend-raw"
	keyDbgLegendFinal       = "dbg-legend-final"
	keyDbgFollowing         = "dbg-following"
	keyDbgClassStatus       = "dbg-class-status"
	keyDbgQueued            = "dbg-queued"
	keyDbgClassBehind       = "dbg-class-behind"
	keyDbgClassCaughtUp     = "dbg-class-caught-up"
	keyDbgClassAhead        = "dbg-class-ahead"
	keyDbgDetach            = "dbg-detach"
	keyDbgDetachRest        = "dbg-detach-rest"
	keyDbgExploring         = "dbg-exploring"
	keyDbgRejoin            = "dbg-rejoin"
	keyDbgRejoinRest        = "dbg-rejoin-rest"
	keyDbgWalkStatus        = "dbg-walk-status"
	keyDbgTokens            = "dbg-tokens"
	keyDbgNoForward         = "dbg-no-forward"
	keyDbgTheChoice         = "dbg-the-choice"
	keyDbgFunnel            = "dbg-funnel"
	keyDbgDraw              = "dbg-draw"
	keyDbgTokenizer         = "dbg-tokenizer"
	keyDbgKvCache           = "dbg-kv-cache"
	keyDbgTraffic           = "dbg-traffic"
	keyDbgToySide           = "dbg-toy-side"
	keyDbgBranches          = "dbg-branches"
	keyDbgChartsHeading     = "dbg-charts-heading"
	keyDbgCompareHeading    = "dbg-compare-heading"
	keyDbgStepSoFar         = "dbg-step-so-far"
	keyDbgNoSteps           = "dbg-no-steps"
	keyDbgWaiting           = "dbg-waiting"
	keyDbgNSteps            = "dbg-n-steps"
	keyDbgOneStep           = "dbg-one-step"
	keyDbgStatusRunning     = "dbg-status-running"
	keyDbgStatusFailed      = "dbg-status-failed"
	keyDbgStatusStopped     = "dbg-status-stopped"
	keyDbgStatusImported    = "dbg-status-imported"
	keyDbgStatusDone        = "dbg-status-done"
	keyDbgContext           = "dbg-context"
	keyDbgBatchNote         = "dbg-batch-note"
	keyDbgFinishedNote      = "dbg-finished-note"
	keyDbgToyStep           = "dbg-toy-step"
	keyDbgRank              = "dbg-rank"
	keyDbgToken             = "dbg-token"
	keyDbgDrawExplain       = "dbg-draw-explain"
	keyDbgBytes             = "dbg-bytes"
	keyDbgHeldBack          = "dbg-held-back"
	keyDbgPromptTokens      = "dbg-prompt-tokens"
	keyDbgPositions         = "dbg-positions"
	keyDbgLayer             = "dbg-layer"
	keyDbgTimeIs            = "dbg-time-is"
	keyDbgWeightsRead       = "dbg-weights-read"
	keyDbgKvReadWritten     = "dbg-kv-read-written"
	keyDbgArithmetic        = "dbg-arithmetic"
	keyDbgIntensity         = "dbg-intensity"
	keyDbgTime              = "dbg-time"
	keyDbgAchieved          = "dbg-achieved"
	keyDbgMachineBandwidth  = "dbg-machine-bandwidth"
	keyDbgPullLabel         = "dbg-pull-label"
	keyDbgPullButton        = "dbg-pull-button"
	keyDbgPullStarted       = "dbg-pull-started"
	keyDbgPullDone          = "dbg-pull-done"
	keyDbgRunning           = "dbg-running"
	keyDbgRun               = "dbg-run"
	keyDbgTvTitle           = "dbg-tv-title"
	keyDbgExportRun         = "dbg-export-run"
	keyDbgFunnelRaw         = "dbg-funnel-raw"
	keyDbgFunnelForced      = "dbg-funnel-forced"
	keyDbgExplainGreedy     = "dbg-explain-greedy"
	keyDbgExplainSample     = "dbg-explain-sample"
	keyDbgExplainForced     = "dbg-explain-forced"
	keyDbgExplainBeam       = "dbg-explain-beam"
	keyDbgKvNone            = "dbg-kv-none"
	keyDbgKvSince           = "dbg-kv-since"
	keyDbgKvPrefill         = "dbg-kv-prefill"
	keyDbgTrafficNone       = "dbg-traffic-none"
	keyDbgTrafficBatch      = "dbg-traffic-batch"
	keyDbgUnknown           = "dbg-unknown"
	keyDbgTokNone           = "dbg-tok-none"
	keyDbgTokBytesOnly      = "dbg-tok-bytes-only"
	keyDbgOneByte           = "dbg-one-byte"
	keyDbgNBytes            = "dbg-n-bytes"
	keyDbgTokHeld           = "dbg-tok-held"
	keyDbgTokSpecial        = "dbg-tok-special"
	keyDbgTokAdds           = "dbg-tok-adds"
	keyDbgBpTop1            = "dbg-bp-top1"
	keyDbgBpRank            = "dbg-bp-rank"
	keyDbgBpEntropy         = "dbg-bp-entropy"
	keyDbgBpEnters          = "dbg-bp-enters"
	keyDbgBpOr              = "dbg-bp-or"
	keyDbgHitTop1           = "dbg-hit-top1"
	keyDbgHitRank           = "dbg-hit-rank"
	keyDbgHitEntropy        = "dbg-hit-entropy"
	keyDbgHitEntered        = "dbg-hit-entered"
	keyDbgHit               = "dbg-hit"
	keyDbgPlayingUntil      = "dbg-playing-until"
	keyDbgNoHit             = "dbg-no-hit"
	keyDbgCmpRunning        = "dbg-cmp-running"
	keyDbgCmpDone           = "dbg-cmp-done"
	keyDbgCmpStopped        = "dbg-cmp-stopped"
	keyDbgCmpSame           = "dbg-cmp-same"
	keyDbgCmpStoppedPick    = "dbg-cmp-stopped-pick"
	keyDbgCmpChose          = "dbg-cmp-chose"
	keyDbgCmpDiffer         = "dbg-cmp-differ"
	keyDbgRowN              = "dbg-row-n"
	keyDbgBeamN             = "dbg-beam-n"
	keyDbgMsgFailed         = "dbg-msg-failed"
	keyDbgMsgStatus         = "dbg-msg-status"
	keyDbgMsgUnreachable    = "dbg-msg-unreachable"
)

// Debugger keys of the classroom roles, the what-if panel, the download
// advice and the translated chosen line, chart titles and run sources.
const (
	keyDbgRunLocked       = "dbg-run-locked"
	keyDbgNoRealModel     = "dbg-no-real-model"
	keyDbgByGreedy        = "dbg-by-greedy"
	keyDbgBySampled       = "dbg-by-sampled"
	keyDbgByForced        = "dbg-by-forced"
	keyDbgByBeam          = "dbg-by-beam"
	keyDbgChosenLine      = "dbg-chosen-line"
	keyDbgDrawFell        = "dbg-draw-fell"
	keyDbgChartCandidates = "dbg-chart-candidates"
	keyDbgChartConfidence = "dbg-chart-confidence"
	keyDbgChartKv         = "dbg-chart-kv"
	keyDbgChartCost       = "dbg-chart-cost"
	keyDbgSrcRun          = "dbg-src-run"
	keyDbgSrcCompare      = "dbg-src-compare"
	keyDbgSrcImported     = "dbg-src-imported"
	keyDbgSrcCopy         = "dbg-src-copy"
	keyDbgHowGreedy       = "dbg-how-greedy"
	keyDbgHowSampled      = "dbg-how-sampled"
	keyDbgHowBeam         = "dbg-how-beam"
	keyDbgWhatIf          = "dbg-whatif"
	keyDbgWhatIfHint      = "dbg-whatif-hint"
	keyDbgWhatIfBranch    = "dbg-whatif-branch"
	keyDbgWhatIfReset     = "dbg-whatif-reset"
	keyDbgWhatIfPartial   = "dbg-whatif-partial"
	keyDbgWhatIfNoDraw    = "dbg-whatif-no-draw"
	keyDbgWhatIfChoice    = "dbg-whatif-choice"
	keyDbgWhatIfCompare   = "dbg-whatif-compare"
	keyDbgWhatIfBeams     = "dbg-whatif-beams"
	keyDbgWhatIfNoStep    = "dbg-whatif-no-step"
)

// Keys of the step view: the text so far, visible whitespace, logits,
// the beam tree and the KV panel without a cache.
const (
	keyDbgTextSoFar      = "dbg-text-so-far"
	keyDbgTintLegend     = "dbg-tint-legend"
	keyDbgTextHelp       = "dbg-text-help"
	keyDbgWsLegend       = "dbg-ws-legend"
	keyDbgLogit          = "dbg-logit"
	keyDbgLogitRaw       = "dbg-logit-raw"
	keyDbgLogitProcessed = "dbg-logit-processed"
	keyDbgKvOffWhy       = "dbg-kv-off-why"
	keyDbgBeams          = "dbg-beams"
	keyDbgBeamsNote      = "dbg-beams-note"
	keyDbgBeamsFinished  = "dbg-beams-finished"
	keyDbgBeamsNone      = "dbg-beams-none"
	keyDbgBeamsWinner    = "dbg-beams-winner"
	keyDbgBeamsPruned    = "dbg-beams-pruned"
	keyDbgBeamsOpen      = "dbg-beams-open"
	keyDbgBeamsScore     = "dbg-beams-score"
	keyDbgBeamsSum       = "dbg-beams-sum"
	keyDbgBeamsLength    = "dbg-beams-length"
)

// Keys of the words the charts draw (web/plots.Words, one key a field),
// and of the Branch box's error for a malformed quoted token.
const (
	keyDbgPlotProbability    = "dbg-plot-probability"
	keyDbgPlotRawP           = "dbg-plot-raw-p"
	keyDbgPlotFinalP         = "dbg-plot-final-p"
	keyDbgPlotChosen         = "dbg-plot-chosen"
	keyDbgPlotRemoved        = "dbg-plot-removed"
	keyDbgPlotStepChose      = "dbg-plot-step-chose"
	keyDbgPlotHowPicked      = "dbg-plot-how-picked"
	keyDbgPlotHowPlain       = "dbg-plot-how-plain"
	keyDbgPlotGreedy         = "dbg-plot-greedy"
	keyDbgPlotSampled        = "dbg-plot-sampled"
	keyDbgPlotBeam           = "dbg-plot-beam"
	keyDbgPlotForced         = "dbg-plot-forced"
	keyDbgPlotStep           = "dbg-plot-step"
	keyDbgPlotStepN          = "dbg-plot-step-n"
	keyDbgPlotTop1           = "dbg-plot-top1"
	keyDbgPlotEntropy        = "dbg-plot-entropy"
	keyDbgPlotTop1Raw        = "dbg-plot-top1-raw"
	keyDbgPlotChosenFinal    = "dbg-plot-chosen-final"
	keyDbgPlotConfidenceOver = "dbg-plot-confidence-over"
	keyDbgPlotConfidenceAt   = "dbg-plot-confidence-at"
	keyDbgPlotKVAxis         = "dbg-plot-kv-axis"
	keyDbgPlotKVOver         = "dbg-plot-kv-over"
	keyDbgPlotKVHeld         = "dbg-plot-kv-held"
	keyDbgPlotKVAt           = "dbg-plot-kv-at"
	keyDbgPlotMoved          = "dbg-plot-moved"
	keyDbgPlotCompute        = "dbg-plot-compute"
	keyDbgPlotTime           = "dbg-plot-time"
	keyDbgPlotCostOver       = "dbg-plot-cost-over"
	keyDbgPlotCostAt         = "dbg-plot-cost-at"
	keyDbgPlotPrefill        = "dbg-plot-prefill"
	keyDbgPlotDecode         = "dbg-plot-decode"
	keyDbgPlotFull           = "dbg-plot-full"
	keyDbgPlotCacheOn        = "dbg-plot-cache-on"
	keyDbgPlotCacheOff       = "dbg-plot-cache-off"
	keyDbgPlotRunN           = "dbg-plot-run-n"
	keyDbgBranchQuoted       = "dbg-branch-quoted"
)

// plotKeys lists the chart words' keys.
func plotKeys() []string {
	return []string{
		keyDbgPlotProbability,
		keyDbgPlotRawP,
		keyDbgPlotFinalP,
		keyDbgPlotChosen,
		keyDbgPlotRemoved,
		keyDbgPlotStepChose,
		keyDbgPlotHowPicked,
		keyDbgPlotHowPlain,
		keyDbgPlotGreedy,
		keyDbgPlotSampled,
		keyDbgPlotBeam,
		keyDbgPlotForced,
		keyDbgPlotStep,
		keyDbgPlotStepN,
		keyDbgPlotTop1,
		keyDbgPlotEntropy,
		keyDbgPlotTop1Raw,
		keyDbgPlotChosenFinal,
		keyDbgPlotConfidenceOver,
		keyDbgPlotConfidenceAt,
		keyDbgPlotKVAxis,
		keyDbgPlotKVOver,
		keyDbgPlotKVHeld,
		keyDbgPlotKVAt,
		keyDbgPlotMoved,
		keyDbgPlotCompute,
		keyDbgPlotTime,
		keyDbgPlotCostOver,
		keyDbgPlotCostAt,
		keyDbgPlotPrefill,
		keyDbgPlotDecode,
		keyDbgPlotFull,
		keyDbgPlotCacheOn,
		keyDbgPlotCacheOff,
		keyDbgPlotRunN,
	}
}

// debuggerKeys lists every debugger key constant, for loadWords.
func debuggerKeys() []string {
	return append([]string{
		keyDbgTagline,
		keyDbgImport,
		keyDbgImportTitle,
		keyDbgOpen,
		keyDbgExport,
		keyDbgStepping,
		keyDbgRunModel,
		keyDbgPromptAs,
		keyDbgAsText,
		keyDbgAsIds,
		keyDbgAsChat,
		keyDbgPadding,
		keyDbgPaddingTitle,
		keyDbgLeft,
		keyDbgRightPitfall,
		keyDbgPromptHint,
		keyDbgSystemPrompt,
		keyDbgChatOptional,
		keyDbgOptions,
		keyDbgOptionsHint,
		keyDbgDecoding,
		keyDbgModelDefault,
		keyDbgGreedy,
		keyDbgSample,
		keyDbgOnDefault,
		keyDbgOff,
		keyDbgGenerate,
		keyDbgStop,
		keyDbgStopTitle,
		keyDbgCompareRuns,
		keyDbgCompare,
		keyDbgCompareModel,
		keyDbgCompareModelNone,
		keyDbgFirst,
		keyDbgFirstTitle,
		keyDbgPrev,
		keyDbgPrevTitle,
		keyDbgPlay,
		keyDbgPlayTitle,
		keyDbgNext,
		keyDbgNextTitle,
		keyDbgLast,
		keyDbgLastTitle,
		keyDbgBranch,
		keyDbgBranchPlaceholder,
		keyDbgBranchTitle,
		keyDbgBranchGoTitle,
		keyDbgBranchCandidate,
		keyDbgBreakpoints,
		keyDbgEntersTop,
		keyDbgWordOrId,
		keyDbgRunToBreakpoint,
		keyDbgPair,
		keyDbgPairTitle,
		keyDbgCharts,
		keyDbgChartsTitle,
		keyDbgKeys,
		keyDbgKeyPrev,
		keyDbgKeyNext,
		keyDbgKeyPlay,
		keyDbgKeyFirst,
		keyDbgKeyLast,
		keyDbgKeyForm,
		keyDbgKeyStop,
		keyDbgKeyBranch,
		keyDbgKeyBreakpoints,
		keyDbgKeyPair,
		keyDbgKeyCharts,
		keyDbgKeyDetach,
		keyDbgNoStep,
		keyDbgStopReason,
		keyDbgChosen,
		keyDbgLegendRaw,
		keyDbgLegendFinal,
		keyDbgFollowing, keyDbgQueued, keyDbgClassStatus, keyDbgClassBehind, keyDbgClassCaughtUp, keyDbgClassAhead,
		keyDbgDetach,
		keyDbgDetachRest,
		keyDbgExploring,
		keyDbgRejoin,
		keyDbgRejoinRest,
		keyDbgWalkStatus,
		keyDbgTokens,
		keyDbgNoForward,
		keyDbgTheChoice,
		keyDbgFunnel,
		keyDbgDraw,
		keyDbgTokenizer,
		keyDbgKvCache,
		keyDbgTraffic,
		keyDbgToySide,
		keyDbgBranches,
		keyDbgChartsHeading,
		keyDbgCompareHeading,
		keyDbgStepSoFar,
		keyDbgNoSteps,
		keyDbgWaiting,
		keyDbgNSteps,
		keyDbgOneStep,
		keyDbgStatusRunning,
		keyDbgStatusFailed,
		keyDbgStatusStopped,
		keyDbgStatusImported,
		keyDbgStatusDone,
		keyDbgContext,
		keyDbgBatchNote,
		keyDbgFinishedNote,
		keyDbgToyStep,
		keyDbgRank,
		keyDbgToken,
		keyDbgDrawExplain,
		keyDbgBytes,
		keyDbgHeldBack,
		keyDbgPromptTokens,
		keyDbgPositions,
		keyDbgLayer,
		keyDbgTimeIs,
		keyDbgWeightsRead,
		keyDbgKvReadWritten,
		keyDbgArithmetic,
		keyDbgIntensity,
		keyDbgTime,
		keyDbgAchieved,
		keyDbgMachineBandwidth,
		keyDbgPullLabel,
		keyDbgPullButton,
		keyDbgPullStarted,
		keyDbgPullDone,
		keyDbgRunning,
		keyDbgRun,
		keyDbgTvTitle,
		keyDbgExportRun,
		keyDbgFunnelRaw,
		keyDbgFunnelForced,
		keyDbgExplainGreedy,
		keyDbgExplainSample,
		keyDbgExplainForced,
		keyDbgExplainBeam,
		keyDbgKvNone,
		keyDbgKvSince,
		keyDbgKvPrefill,
		keyDbgTrafficNone,
		keyDbgTrafficBatch,
		keyDbgUnknown,
		keyDbgTokNone,
		keyDbgTokBytesOnly,
		keyDbgOneByte,
		keyDbgNBytes,
		keyDbgTokHeld,
		keyDbgTokSpecial,
		keyDbgTokAdds,
		keyDbgBpTop1,
		keyDbgBpRank,
		keyDbgBpEntropy,
		keyDbgBpEnters,
		keyDbgBpOr,
		keyDbgHitTop1,
		keyDbgHitRank,
		keyDbgHitEntropy,
		keyDbgHitEntered,
		keyDbgHit,
		keyDbgPlayingUntil,
		keyDbgNoHit,
		keyDbgCmpRunning,
		keyDbgCmpDone,
		keyDbgCmpStopped,
		keyDbgCmpSame,
		keyDbgCmpStoppedPick,
		keyDbgCmpChose,
		keyDbgCmpDiffer,
		keyDbgRowN,
		keyDbgBeamN,
		keyDbgMsgFailed,
		keyDbgMsgStatus,
		keyDbgMsgUnreachable,
		// The attention and logit-lens panels (web/inside.go).
		keyDbgAttention,
		keyDbgAttnExplain,
		keyDbgAttnGrid,
		keyDbgAttnAll,
		keyDbgAttnHead,
		keyDbgAttnLayer,
		keyDbgLens,
		keyDbgLensExplain,
		keyDbgLensSettled,
		keyDbgLensWavers,
		keyDbgLensNever,
		keyDbgInsideNoAttention,
		keyDbgInsideNoLens,
		keyDbgInsideNotRecorded,
		keyDbgInsideTooBig,
		keyDbgInsideServer,
		keyDbgInsideStepNone,
		keyDbgInsideComputing,
		keyDbgInsideAfterRun,
		keyDbgInsideFailed,
		keyDbgRunLocked,
		keyDbgNoRealModel,
		keyDbgByGreedy,
		keyDbgBySampled,
		keyDbgByForced,
		keyDbgByBeam,
		keyDbgChosenLine,
		keyDbgDrawFell,
		keyDbgChartCandidates,
		keyDbgChartConfidence,
		keyDbgChartKv,
		keyDbgChartCost,
		keyDbgSrcRun,
		keyDbgSrcCompare,
		keyDbgSrcImported,
		keyDbgSrcCopy,
		keyDbgHowGreedy,
		keyDbgHowSampled,
		keyDbgHowBeam,
		keyDbgWhatIf,
		keyDbgWhatIfHint,
		keyDbgWhatIfBranch,
		keyDbgWhatIfReset,
		keyDbgWhatIfPartial,
		keyDbgWhatIfNoDraw,
		keyDbgWhatIfChoice,
		keyDbgWhatIfCompare,
		keyDbgWhatIfBeams,
		keyDbgWhatIfNoStep,
		keyDbgTextSoFar,
		keyDbgTintLegend,
		keyDbgTextHelp,
		keyDbgWsLegend,
		keyDbgLogit,
		keyDbgLogitRaw,
		keyDbgLogitProcessed,
		keyDbgKvOffWhy,
		keyDbgBeams,
		keyDbgBeamsNote,
		keyDbgBeamsFinished,
		keyDbgBeamsNone,
		keyDbgBeamsWinner,
		keyDbgBeamsPruned,
		keyDbgBeamsOpen,
		keyDbgBeamsScore,
		keyDbgBeamsSum,
		keyDbgBeamsLength,
		keyDbgBranchQuoted,
		keyDbgServerFunnel,
		keyDbgServerKv,
		keyDbgServerTraffic,
		keyDbgServerInside,
		keyDbgServerMissing,
	}, plotKeys()...)
}

// The keys of what a model on a serving engine cannot show
// (web/serverpanels.go).
const (
	keyDbgServerFunnel  = "dbg-server-funnel"
	keyDbgServerKv      = "dbg-server-kv"
	keyDbgServerTraffic = "dbg-server-traffic"
	keyDbgServerInside  = "dbg-server-inside"
	keyDbgServerMissing = "dbg-server-missing"
)

// The keys of the attention and logit-lens panels (web/inside.go).
const (
	keyDbgAttention         = "dbg-attention"
	keyDbgAttnExplain       = "dbg-attn-explain"
	keyDbgAttnGrid          = "dbg-attn-grid"
	keyDbgAttnAll           = "dbg-attn-all"
	keyDbgAttnHead          = "dbg-attn-head"
	keyDbgAttnLayer         = "dbg-attn-layer"
	keyDbgLens              = "dbg-lens"
	keyDbgLensExplain       = "dbg-lens-explain"
	keyDbgLensSettled       = "dbg-lens-settled"
	keyDbgLensWavers        = "dbg-lens-wavers"
	keyDbgLensNever         = "dbg-lens-never"
	keyDbgInsideNoAttention = "dbg-inside-no-attention"
	keyDbgInsideNoLens      = "dbg-inside-no-lens"
	keyDbgInsideNotRecorded = "dbg-inside-not-recorded"
	keyDbgInsideTooBig      = "dbg-inside-too-big"
	keyDbgInsideServer      = "dbg-inside-server"
	keyDbgInsideStepNone    = "dbg-inside-step-none"
	keyDbgInsideComputing   = "dbg-inside-computing"
	keyDbgInsideAfterRun    = "dbg-inside-after-run"
	keyDbgInsideFailed      = "dbg-inside-failed"
)
