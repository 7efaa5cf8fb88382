"""Jump-forward decoding: the tokens a JSON grammar forces are evaluated as one batch.

Where the grammar leaves exactly one way on (a key, ``": "``, ``", "``, a closing brace),
generating those tokens one by one costs a full decode each. llama-cpp-python's
``Llama.generate`` already does speculative decoding with a draft model: after each
sampled token it evaluates the token and the draft's proposal in one batch, samples at
every drafted position with the real sampler, and cuts the KV cache at the first token
that differs. ``GrammarForcedDraft`` is such a draft: it proposes the text the grammar
forces next. Every proposed token is still chosen (or refused) by the real sampler, so a
wrong proposal only costs its rows in the batch; but llama.cpp's logits for a batch are
not bit-identical to one-token decodes, so a near tie can go the other way
(docs/embedded-model.md).

Installed by the launcher with ``--fast-paths on --jump-forward on`` (localmodel.launcher);
it imports llama_cpp and numpy inside functions, as the launcher does.
"""

from __future__ import annotations

import ctypes
import math
import string
import sys
from dataclasses import dataclass, field
from typing import Any

# Printable ASCII is enough to see what a JSON grammar forces: outside strings JSON is
# ASCII, and inside a string every character is allowed, so nothing is forced there.
PROBED_CHARACTERS = string.ascii_letters + string.digits + string.punctuation + " \n\t"
# Where the grammar leaves an optional space (llama.cpp's JSON grammars: ``space ::= " "?``)
# the model writes as json.dumps does: a space after ':' and ',' only. A wrong guess costs
# the rest of that proposal, never a different answer.
SPACE_AFTER = (b":", b",")
# Longest forced text proposed at once: more than the longest key with its punctuation.
MAX_FORCED_CHARACTERS = 40


@dataclass
class DraftStats:
    """What the draft proposed in one generation, and how much of it the sampler kept."""

    generated: int = 0
    proposed: int = 0
    accepted: int = 0
    proposals: list[tuple[int, list[int]]] = field(default_factory=list)

    def settle(self, generated: list[int]) -> None:
        """Count the proposed tokens the sampler wrote as proposed."""
        self.generated = len(generated)
        for start, tokens in self.proposals:
            self.proposed += len(tokens)
            for offset, token in enumerate(tokens):
                if start + offset >= len(generated) or generated[start + offset] != token:
                    break
                self.accepted += 1
        self.proposals.clear()


class GrammarForcedDraft:
    """A llama-cpp-python draft model (``Llama.draft_model``) that proposes the tokens
    the active GrammarLastGreedySampler's grammar forces next (read through its
    ``grammar_sampler`` and ``written``), and nothing under any other sampler. One per
    generation; ``pending`` tells the launcher's ``eval`` that the next batch holds a
    proposal, whose every row needs logits."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama
        self.pending = 0
        self.stats = DraftStats()

    def __call__(self, input_ids: Any, /, **kwargs: Any) -> Any:
        import numpy as np

        # The launcher's GrammarLastGreedySampler exposes these; any other sampler (another
        # temperature, no grammar) gets no proposal, so generation stays the library's own.
        sampler: Any = getattr(self._llama, "_sampler", None)
        proposal: list[int] = []
        if hasattr(sampler, "grammar_sampler") and getattr(sampler, "written", None):
            proposal = self.propose(sampler)
        if proposal:
            self.stats.proposals.append((len(sampler.written), proposal))
        self.pending = len(proposal)
        return np.array(proposal, dtype=np.intc)

    def propose(self, sampler: Any) -> list[int]:
        """The tokens of the text the grammar forces after what `sampler` has written."""
        last = sampler.written[-1]
        forced = forced_text(sampler, self._probe(), self._llama.detokenize([last]))
        if not forced:
            return []
        tokenize = self._llama.tokenize
        # Tokenized with the last token's text in front, as the model would write it; if
        # that merges the last token with the forced text, the forced text alone.
        with_last = tokenize(self._llama.detokenize([last]) + forced, add_bos=False)
        tokens = with_last[1:] if with_last[:1] == [last] else tokenize(forced, add_bos=False)
        # The last token may merge with the free text that follows ('"' with ':' into '":'):
        # keep it only where appending a letter or a digit leaves the tokens as they are.
        for follower in (b"a", b"1"):
            if tokenize(forced + follower, add_bos=False)[: len(tokens)] != tokens:
                return tokens[:-1]
        return tokens

    def _probe(self) -> Probe:
        probe: Probe | None = getattr(self._llama, "_forced_text_probe", None)
        if probe is None:
            probe = Probe.for_model(self._llama)
            self._llama._forced_text_probe = probe  # one per model: built from its vocabulary
        return probe


class Probe:
    """Single-character tokens (and end of text), to ask a grammar which ones it allows."""

    def __init__(self, characters: list[bytes], token_ids: list[int], end_of_text: int) -> None:
        from llama_cpp import llama_cpp as lib

        self.characters = [*characters, b""]
        self.token_ids = [*token_ids, end_of_text]
        self._data = (lib.llama_token_data * len(self.token_ids))()

    @classmethod
    def for_model(cls, llama: Any) -> Probe:
        characters, token_ids = [], []
        for character in PROBED_CHARACTERS.encode():
            tokens = llama.tokenize(bytes([character]), add_bos=False, special=False)
            if len(tokens) == 1:
                characters.append(bytes([character]))
                token_ids.append(tokens[0])
        return cls(characters, token_ids, llama.token_eos())

    def allowed(self, grammar: Any) -> list[int]:
        """Indexes of the probed tokens `grammar` (a llama.cpp sampler) allows next."""
        from llama_cpp import llama_cpp as lib

        for index, token in enumerate(self.token_ids):
            self._data[index].id = token
            self._data[index].logit = 0.0
            self._data[index].p = 0.0
        candidates = lib.llama_token_data_array(
            data=self._data, size=len(self.token_ids), selected=-1, sorted=False
        )
        lib.llama_sampler_apply(grammar, ctypes.byref(candidates))
        return [i for i in range(len(self.token_ids)) if not math.isinf(self._data[i].logit)]


def forced_text(sampler: Any, probe: Probe, written: bytes) -> bytes:
    """The text `sampler`'s grammar forces next, walked on a copy of its grammar: one
    character at a time while exactly one is allowed (or an optional space, guessed as
    json.dumps writes it); empty where the model has a choice."""
    from llama_cpp import llama_cpp as lib

    grammar = lib.llama_sampler_clone(sampler.grammar_sampler)
    space = probe.characters.index(b" ")
    forced = b""
    previous = written[-1:]
    try:
        while len(forced) < MAX_FORCED_CHARACTERS:
            allowed = probe.allowed(grammar)
            if len(allowed) == 2 and space in allowed:  # an optional space, then one way on
                other = allowed[0] if allowed[1] == space else allowed[1]
                allowed = [space] if previous in SPACE_AFTER else [other]
            if len(allowed) != 1 or probe.characters[allowed[0]] == b"":
                break  # a choice, or the end of the text
            character = probe.characters[allowed[0]]
            lib.llama_sampler_accept(grammar, probe.token_ids[allowed[0]])
            forced += character
            previous = character
    finally:
        lib.llama_sampler_free(grammar)
    return forced


def jump_forward() -> None:
    """Give every generation under GrammarLastGreedySampler a GrammarForcedDraft, with
    logits for the rows of each proposal only (llama-cpp-python would compute them for
    every prompt row as soon as a model has a draft)."""
    from llama_cpp import Llama

    generate = Llama.generate
    evaluate = Llama.eval

    def generate_jumping_forward(self: Llama, tokens: Any, *args: Any, **kwargs: Any) -> Any:
        import numpy as np

        if self.draft_model is not None:  # a draft of the caller's own
            return (yield from generate(self, tokens, *args, **kwargs))
        # The library hands a stopping criterion the logits row at the sampled token's
        # offset in its buffer (one row here, keep_one_logits_row), which a proposal's rows
        # overrun; it is called here instead, as the library calls it: with the prompt and
        # every token before this one, and the same (never written) row.
        stop = kwargs.pop("stopping_criteria", None)
        seen = list(tokens)
        draft = GrammarForcedDraft(self)
        self.draft_model = draft  # set after __init__: no logits_all
        inner = generate(self, tokens, *args, stopping_criteria=None, **kwargs)
        started = False
        try:
            token = next(inner)
            started = True
            while True:
                if stop is not None and stop(np.array(seen, dtype=np.intc), self.scores[-1]):
                    return None
                seen.append(token)
                token = inner.send((yield token))
        except StopIteration:
            return None
        finally:
            inner.close()
            self.draft_model = None
            written = getattr(getattr(self, "_sampler", None), "written", None)
            if started and written:
                draft.stats.settle(written)
                print(
                    f"llama_launcher: jump-forward: {draft.stats.generated} tokens generated, "
                    f"{draft.stats.accepted} of {draft.stats.proposed} proposed kept",
                    file=sys.stderr,
                    flush=True,
                )

    def eval_with_proposal_rows(self: Llama, tokens: Any) -> None:
        draft = self.draft_model
        if not isinstance(draft, GrammarForcedDraft) or not draft.pending or len(tokens) < 2:
            return evaluate(self, tokens)
        # The sampled token and the proposal: every row is sampled, so each needs logits;
        # the sampler reads them by their offset from the batch's end (Llama.sample's idx).
        draft.pending = 0
        self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
        self._batch.set_batch(batch=tokens, n_past=self.n_tokens, logits_all=True)
        self._ctx.decode(self._batch)
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self._requires_eval = False
        return None

    Llama.generate = generate_jumping_forward
    Llama.eval = eval_with_proposal_rows
