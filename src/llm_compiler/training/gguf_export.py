"""GGUF export of a trained Llama for llama.cpp, written the way llama.cpp's converter writes one.

:func:`write_gguf` converts a saved Hugging Face Llama (``save_pretrained``'s folder,
safetensors, with a Llama BPE ``tokenizer.json`` such as Code Llama's) to GGUF, f32 or
f16, as llama.cpp's ``convert_hf_to_gguf.py`` converts a Llama: the q and k projections
are permuted back to Meta's rotary layout (:func:`_permute`), and the vocabulary is
written as a sentencepiece (``llama``) vocabulary whose scores make llama.cpp merge in
the BPE merges' order (:func:`_gguf_vocabulary`), so it tokenizes as ``tokenizer.json``
does. One exception: llama.cpp merges any two pieces that make a vocabulary piece, so
text holding `` <SUF>``, `` <PRE>``, `` <M`` or `` <E`` can reach Code Llama's extra
pieces there and not with ``tokenizer.json``. ``llm-compiler train --export-gguf``
writes ``model.gguf`` with it, for the ``gguf:`` backend; quantize it with llama.cpp's
own ``llama-quantize``. Needs ``gguf``, ``numpy`` and ``safetensors``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from llm_compiler.errors import TrainingError
from llm_compiler.training.tokenizer import BOS_ID, EOS_ID, INFILLING_TOKENS, UNK_ID


def _permute(weights: Any, n_head: int) -> Any:
    """Undoes the Hugging Face rotary permutation of a q or k projection, as llama.cpp's converter does."""
    rows = weights.shape[0]
    return (
        weights.reshape(n_head, 2, rows // n_head // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def _gguf_vocabulary(tokenizer_json: dict[str, Any]) -> tuple[list[bytes], list[float], list[int]]:
    """The pieces, scores and token types of a Llama BPE ``tokenizer.json``, for llama.cpp.

    llama.cpp's sentencepiece tokenizer merges, at each step, the adjacent pair whose
    concatenation is the piece of highest score. A piece's score is minus the rank of
    the first merge that makes it, so llama.cpp merges in the order of the BPE merges.
    Special tokens are control tokens (the infilling ones too, as llama.cpp treats them);
    pieces no merge makes score below every merged piece.
    """
    from gguf import TokenType

    model = tokenizer_json["model"]
    by_id = {index: piece for piece, index in model["vocab"].items()}
    if sorted(by_id) != list(range(len(by_id))):
        raise TrainingError("the tokenizer's vocabulary ids are not 0..n-1")
    first_rank: dict[str, int] = {}
    for rank, merge in enumerate(model["merges"]):
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        first_rank.setdefault(left + right, rank)
    special = {entry["content"] for entry in tokenizer_json.get("added_tokens", []) if entry.get("special")}
    pieces, scores, types = [], [], []
    for index in range(len(by_id)):
        piece = by_id[index]
        pieces.append(piece.encode("utf-8"))
        if piece == model.get("unk_token"):
            scores.append(0.0)
            types.append(TokenType.UNKNOWN)
        elif piece in special or piece in INFILLING_TOKENS:
            scores.append(0.0)
            types.append(TokenType.CONTROL)
        elif re.fullmatch(r"<0x[0-9A-F]{2}>", piece):
            scores.append(0.0)
            types.append(TokenType.BYTE)
        else:
            scores.append(-float(first_rank.get(piece, len(model["merges"]) + index)))
            types.append(TokenType.NORMAL)
    return pieces, scores, types


def write_gguf(model_dir: Path, path: Path, dtype: str = "f32") -> None:
    """Converts a saved Hugging Face Llama (safetensors) and its tokenizer to a GGUF file.

    Args:
        model_dir: A folder written by ``save_pretrained`` with ``tokenizer.json``.
        path: The GGUF file to write.
        dtype: ``"f32"``, or ``"f16"`` for the matrices (norms stay f32, as llama.cpp does).
    """
    import gguf
    import numpy as np
    from safetensors import safe_open

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    tokenizer_json = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "llama":
        raise TrainingError(f"{model_dir} is not a Llama model ({config.get('model_type')!r})")
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads") or heads
    hidden = config["hidden_size"]
    rope = config.get("rope_parameters") or {}
    rope_theta = rope.get("rope_theta", config.get("rope_theta", 10_000.0))
    if dtype not in ("f32", "f16"):
        raise ValueError(f"dtype must be 'f32' or 'f16', not {dtype!r}")

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(model_dir.name)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(hidden)
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_rope_dimension_count(config.get("head_dim") or hidden // heads)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(float(rope_theta))
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32 if dtype == "f32" else gguf.LlamaFileType.MOSTLY_F16)

    pieces, scores, types = _gguf_vocabulary(tokenizer_json)
    if len(pieces) != config["vocab_size"]:
        raise TrainingError(f"the tokenizer has {len(pieces)} tokens, the model {config['vocab_size']}")
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(pieces)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_unk_token_id(UNK_ID)
    writer.add_bos_token_id(config.get("bos_token_id", BOS_ID))
    writer.add_eos_token_id(config.get("eos_token_id", EOS_ID))
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(True)

    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    per_layer = {
        "input_layernorm": "attn_norm",
        "self_attn.q_proj": "attn_q",
        "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v",
        "self_attn.o_proj": "attn_output",
        "post_attention_layernorm": "ffn_norm",
        "mlp.gate_proj": "ffn_gate",
        "mlp.up_proj": "ffn_up",
        "mlp.down_proj": "ffn_down",
    }
    for layer in range(config["num_hidden_layers"]):
        for hf_name, gguf_name in per_layer.items():
            names[f"model.layers.{layer}.{hf_name}.weight"] = f"blk.{layer}.{gguf_name}.weight"
    files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        raise TrainingError(f"no safetensors weights in {model_dir}")
    for file in files:
        with safe_open(str(file), framework="numpy") as weights:
            for hf_name in weights.keys():  # noqa: SIM118 (safe_open is not a mapping)
                if hf_name not in names:
                    if hf_name.endswith("rotary_emb.inv_freq"):
                        continue
                    raise TrainingError(f"unexpected tensor {hf_name} in {file}")
                tensor = weights.get_tensor(hf_name).astype(np.float32)
                if hf_name.endswith("q_proj.weight"):
                    tensor = _permute(tensor, heads)
                elif hf_name.endswith("k_proj.weight"):
                    tensor = _permute(tensor, kv_heads)
                if dtype == "f16" and tensor.ndim > 1:
                    tensor = tensor.astype(np.float16)
                writer.add_tensor(names[hf_name], np.ascontiguousarray(tensor))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
