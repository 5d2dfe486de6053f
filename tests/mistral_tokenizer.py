"""The Mistral-7B v1 SentencePiece tokenizer (base of Bielik-11B's) as a fast tokenizer, for tests.

mistral-common ships only the .model file, and transformers 5 cannot convert it as is:
LlamaTokenizer(vocab_file=...) silently yields a 3-token vocabulary and LlamaConverter fails in its
merge extraction. So the BPE model is assembled here from the .model's pieces and scores with
Mistral's own tokenizer.json settings (Prepend("▁") + Replace(" ", "▁"), byte fallback), BOS
added by a post-processor. tests/test_translator.py checks it against
`sentencepiece` itself.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import mistral_common
from tokenizers import AddedToken, Tokenizer, decoders, normalizers, processors
from tokenizers.models import BPE
from transformers import PreTrainedTokenizerFast

from decoder.compat.transformers import generate_merges, sentencepiece_extractor

MODEL_FILE = Path(mistral_common.__file__).parent / "data" / "tokenizer.model.v1"


@lru_cache(maxsize=1)
def mistral_v1():
    """An mlx-lm TokenizerWrapper over the converted tokenizer (<unk>=0, BOS <s>=1, EOS </s>=2)."""
    from mlx_lm.tokenizer_utils import TokenizerWrapper

    proto = sentencepiece_extractor(str(MODEL_FILE)).proto
    vocab = {p.piece: i for i, p in enumerate(proto.pieces)}
    # Merges ranked by the merged piece's score, as sentencepiece applies them; ranking by id
    # (the default) puts whitespace pieces like "▁▁" (id 259, low score) far too early.
    merges = generate_merges(vocab, {p.piece: p.score for p in proto.pieces})
    backend = Tokenizer(BPE(vocab, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    backend.add_special_tokens(
        [AddedToken(t, normalized=False, special=True) for t in ("<unk>", "<s>", "</s>")]
    )
    backend.normalizer = normalizers.Sequence(
        [normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]
    )
    backend.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)]
    )
    hf = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    return TokenizerWrapper(hf)
