//! The `diffattn` command line: runs the engine on a JSON spec and prints every stage as JSON
//! (DESIGN.md §6), the same format the page exports; and classifies a sentence with the
//! trained sentiment models (docs/MODEL.md), whose weights are built into this binary or read
//! from a file; and runs the real pretrained model all-MiniLM-L6-v2 (`encode`, docs/MINILM.md).
//!
//! Arguments are read as the OS gives them, so a file name or a text that is not UTF-8 works;
//! every failure is a message on standard error and an exit status (2 for input that cannot be
//! used, 1 for output that cannot be written), never a panic. Each command is a module of its
//! own in `src/bin/diffattn/`.

use std::ffi::OsString;
use std::process::ExitCode;

// The commands' modules live in src/bin/diffattn/. A file directly in src/bin/ would be a
// binary of its own, hence the paths.
#[path = "diffattn/args.rs"]
mod args;
#[path = "diffattn/bench.rs"]
mod bench;
#[path = "diffattn/bench_bert.rs"]
mod bench_bert;
// The conversion reads Hugging Face's files natively only (the library's `bert::convert` is
// not in wasm builds, where this binary is compiled only beside the wasm tests).
#[cfg(not(target_arch = "wasm32"))]
#[path = "diffattn/convert.rs"]
mod convert;
#[path = "diffattn/encode.rs"]
mod encode;
#[path = "diffattn/noise.rs"]
mod noise;
#[path = "diffattn/predict.rs"]
mod predict;
#[path = "diffattn/retrieve.rs"]
mod retrieve;
#[path = "diffattn/schema.rs"]
mod schema;
#[path = "diffattn/stages.rs"]
mod stages;
#[path = "diffattn/streams.rs"]
mod streams;

use streams::{say, write_stdout, Failure};

const HELP: &str = r#"diffattn: every stage of differential attention, from a JSON spec.

USAGE
    diffattn stages [--pretty] [--maps LIST] [--layer N] [FILE] < spec.json > stages.json
    diffattn predict [--mechanism M] [--lang en|zh|auto] [--pretty] "TEXT"
    diffattn predict --model FILE [--lang en|zh|auto] [--pretty] "TEXT"
    diffattn retrieve [--mechanism M] [--layer N] [--weights FILE] [--pretty] "TEXT"
    diffattn retrieve [--mechanism M] [--weights FILE] --spec OUT [--pretty] "TEXT"
    diffattn encode [--model FILE] [--attentions] "TEXT"
    diffattn noise [--model FILE] [--query N] [--target N] [--pretty] "TEXT"
    diffattn convert-bert [--name NAME] [--source TEXT] DIR OUT
    diffattn bench-bert [--model FILE] [--pieces 16,128,512] [--reps N] TEXTFILE
    diffattn bench [--tokens L] [--heads H] [--mechanism M] [--json]   (see bench --help)
    diffattn schema [--write | --check] [--root DIR]
    diffattn --help | --version

`stages` reads a spec from FILE, or from standard input when FILE is absent or "-", and
prints the stages as JSON, written as they are produced. The spec is JSON, or the binary
form: a safetensors file whose tensors are the array fields and whose __metadata__ "spec"
holds the other fields as JSON (docs/DESIGN.md §7.8; python/'s diffattn.save writes it). A
bad spec exits with status 2 and a message naming the field. --maps a,d,fused prints only those maps of each head (names as in
the output below; the page's A, shift, D and G work too); the output is always printed.
A multi-layer file ({"layers": [spec, ...]}, §7.11) gives its first layer, or layer N with
--layer N (from 1); an N past its last layer exits with status 2 naming the range.

`predict` classifies TEXT (or standard input when TEXT is absent or "-") as positive or
negative with the trained model of mechanism M (default shift_diff; also standard,
diff_transformer, input_diff, cosine, local, diff_transformer_v2, hierarchical,
gated_attention), or with the
weights file FILE in the format of docs/MODEL.md, and prints JSON:
    {"tokens": [...], "total_tokens": N, "unknown": [tokens read as <unk>],
     "label": "positive"|"negative", "probability": P(label), "positive": P(positive),
     "mechanism": M, "lang": "en"|"zh"}
One model reads both languages (English words and Chinese characters share its vocabulary);
--lang only names the language in the output, and `auto` (the default) picks zh when most
tokens are CJK characters. The built-in weights come from weights/. A text of more tokens
than the limit is cut, and standard error says so (total_tokens counts them all). A text
that is not UTF-8 is decoded with U+FFFD for each invalid sequence, and standard error says
how many.

`schema` (for the project's own build) checks, or with --write writes, the files made from
the settings' schema (src/schema/): the page's tables, the element's TypeScript types and the
widget's traits; --check exits with status 2 naming the stale ones.

`retrieve` puts TEXT, a context ending with the question "What is the NOUN of NAME?", to the
trained retrieval model of mechanism M (default diff_transformer; also standard, shift_diff,
diff_transformer_v2; docs/LESSON.md) and prints JSON:
    {"mechanism": M, "answer": "N" (the predicted number), "probability": P(answer),
     "expected": "N" | null (what the context's last fact about the key says),
     "answer_attention", "noise_attention", "noise_magnitude": the lesson's measure at layer N,
     "answer_abs", "noise_abs": the same as shares of the row's absolute values (default the last, the layer that retrieves; 1 is the first), "layer": N,
     "layers": [every layer's measure], "mean_over_layers": {...} (the paper's average),
     "tokens", "unknown": [tokens read as <unk>], "answer_tokens": [their indices],
     "question": {"noun", "name"}, "unknown_keys": [the question's keys outside the vocabulary],
     "warning": a sentence when a key is outside the vocabulary}
The measure: the share of the question mark's attention on the answer's tokens and on every
other context token, averaged over heads, on A (standard), A' (shift_diff) or A1 - lambda A2
(both Differential Transformers). A text without the question exits with status 2.
--weights reads a retrieval weights file instead of the built-in one. TEXT is read as `predict` reads
it (standard input for none or "-"; not UTF-8 is decoded lossily, with a warning).
--spec OUT writes, in place of the answer, every layer of the model over TEXT as one
multi-layer spec to OUT (standard output for "-"): {"layers": [spec, ...]} (docs/DESIGN.md
§7.11), layer l's spec holding what enters that layer's attention (its x: the token table's
rows, plus what the layers before it added), its weights, its mechanism with the trained
parameters, "causal": true and the tokens as labels; `diffattn stages --layer N OUT` gives
layer N's maps, the ones the measure reads. TEXT need not end with the question.

`encode` runs the real pretrained model all-MiniLM-L6-v2 (a BERT: 6 layers, 12 heads,
d = 384, 30,522 word pieces; Apache-2.0; docs/MINILM.md) on TEXT (read as `predict` reads it)
and prints one JSON object:
    {"tokens": [the word pieces, "[CLS]" first and "[SEP]" last],
     "embedding": [384 numbers: the mean of the last layer's vectors, L2-normalised],
     "attentions": [layer][head][query][key] (with --attentions: each row a softmax)}
A text of more than 512 word pieces (the model's positions) is cut, and standard error says
so. Without --model it reads weights/minilm/minilm.bin in this checkout, which the set-up
builds (scripts/setup runs scripts/fetch-model); a missing file says so.

`noise` is the noise lesson on the same model (docs/LESSON.md, "The noise lesson on the real
model"; the page's `?lesson=noise`): for the query word piece --query and the one it should find,
--target (from 0, [CLS] being 0; without them the lesson proposes the question mark and the
answer of a retrieval text, or a pronoun and the first noun of its sentence), every layer's and head's
share of the query's row on the target, on [CLS]/[SEP] and on the rest (signed, and as shares of
the row's absolute values), then the same for the head minus λ × the partner head of its layer
that cancels the most while keeping the target, and after shift-difference; with the means over
every head and layer. JSON: {"tokens", "proposed", "lesson": {"query", "target", "sinks",
"heads": [{"layer", "head", "before", "difference": {"head", "lambda", "shares"} | null, "links",
"shift"}], "mean_before", "mean_difference", "mean_shift"}}, layers and heads from 0.

`convert-bert` converts a BERT in Hugging Face's files (DIR/model.safetensors, config.json,
tokenizer.json) to the project's weights file OUT, matrices in half floats; the same files
give the same bytes (scripts/fetch-model runs it). `bench-bert` times the model's whole
forward pass at each length of word pieces (the first pieces of TEXTFILE's text), one thread,
and prints the medians as JSON (scripts/bench-minilm runs it beside PyTorch).

SPEC (one sentence; weights in PyTorch's [out][in] layout)
    mechanism   "standard" | "shift_diff" | "diff_transformer" | "input_diff" | "cosine" | "local"
                | "diff_transformer_v2" | "hierarchical" | "gated_attention"
    heads       H, a positive integer dividing d (diff heads for diff_transformer: 2H divides d)
    causal      true | false
    x           L x d   the vectors entering the attention layer
    w_q w_k w_v w_o     d x d each
    shift_diff:       shift (integer), difference "single"|"symmetric",
                      renormalize "none"|"softmax", shift_fill "circular"|"zero" (default circular),
                      gate {"alpha": [H], "beta": [H], "gamma": [H]}
    diff_transformer: depth (integer >= 0), lambda_q1 lambda_k1 lambda_q2 lambda_k2 ([d/H/2] each),
                      subln ([d/H])
    cosine:           tau
    local:            window (radius, integer >= 0)
    gated_attention:  w_output_gate (d x d; H*head_dim x d in a real layer), b_output_gate
                      (optional): each head's A V times sigmoid(x w_output_gate^T + b), per
                      token and channel, before w_o (docs/DESIGN.md §4.1)
  A real layer (docs/DESIGN.md §7; diffattn.capture in python/ writes these):
    head_dim, kv_heads (grouped-query attention), b_q b_k b_v b_o (biases),
    rope {layout "half"|"interleaved", theta | inv_freq, rotary_dim, positions,
          attention_scaling}, tokens (labels), model, layer
    diff_transformer:    pairing "adjacent"|"halves", lambda_init (instead of depth),
                         subln optional (no learned weight), subln_eps,
                         temperature T > 0 (default 1): both maps' scores over T
    diff_transformer_v2: w_lambda (H x d): lambda = sigmoid(x w_lambda^T) per token and head
    hierarchical:        segment (tokens per segment)
  stages (optional) is ignored: the answer a page export carries; it is recomputed.
A spec is one JSON object in UTF-8 (a leading byte-order mark is fine); an unknown field,
an array in place of an object, and anything after the spec are errors. Every number must be
finite in f32.

LIMITS (diffattn::text::limits; derived from a 1 GiB budget in docs/RELIABILITY.md)
    2,048 tokens (MAX_TOKENS): the rows of x, the tokens predict classifies, the context retrieve reads
    33,554,432 cells per map (MAX_MAP_CELLS): heads x tokens x keys, e.g. 8 heads at 2,048
                tokens or 16 heads at 1,448
    at most 2,048 (MAX_D_MODEL): the width of x, both sides of every weight
    1 GiB (MAX_INPUT_BYTES) of spec or weights file; 16 MiB (MAX_TEXT_BYTES) of text
A spec over a limit exits with status 2 before the engine runs, naming the field and the
limit.

OUTPUT
    heads   one object per head: "a" (L x L; L x (L-1) for input_diff);
            shift_diff adds "shifted", "d", "g", "fused" (and "shifted_back" when symmetric);
            diff_transformer and diff_transformer_v2 have "a1", "a2", "diff" instead;
            hierarchical has "local", "segments" (L x segments) and "a";
            gated_attention adds "output_gate" and "gated" (L x head_dim: the gate and the
            head's gated output A V * gate, per channel)
    lambda  diff_transformer: one number; diff_transformer_v2: L x H
    output_gate_mean   gated_attention: L x H, the gate's mean over each head's channels
    output  L x d

EXIT STATUS
    0 done; 1 the output could not be written (standard error says why; a closed pipe, as
    with `| head`, says nothing); 2 the arguments, spec, text or weights file cannot be used.

EXAMPLE
    echo '{"mechanism": "shift_diff", "heads": 1, "causal": false,
           "x": [[1, 0], [0, 1], [1, 1]],
           "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]],
           "w_v": [[1, 0], [0, 1]], "w_o": [[1, 0], [0, 1]],
           "shift": 1, "difference": "single", "renormalize": "none",
           "gate": {"alpha": [1.0], "beta": [1.0], "gamma": [0.0]}}' | diffattn stages --pretty
"#;

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let command = if args.is_empty() {
        None
    } else {
        Some(args.remove(0))
    };
    // The benchmark reads only numbers and names, as UTF-8.
    if command.as_ref().and_then(|c| c.to_str()) == Some("bench") {
        return match args
            .into_iter()
            .map(OsString::into_string)
            .collect::<Result<Vec<String>, OsString>>()
        {
            Ok(args) => bench::main(&args),
            Err(arg) => {
                say(&format!(
                    "bench: {:?} is not valid UTF-8",
                    arg.to_string_lossy()
                ));
                ExitCode::from(2)
            }
        };
    }
    let result = match command.as_ref().map(|c| c.to_str()) {
        None | Some(Some("-h" | "--help" | "help")) => help(),
        Some(Some("-V" | "--version")) => write_stdout("the version", |out| {
            writeln!(out, "diffattn {}", env!("CARGO_PKG_VERSION"))
        }),
        Some(Some("stages")) => stages::run(args),
        Some(Some("predict")) => predict::run(args),
        Some(Some("retrieve")) => retrieve::run(args),
        Some(Some("schema")) => schema::run(args),
        Some(Some("encode")) => encode::run(args),
        Some(Some("noise")) => noise::run(args),
        #[cfg(not(target_arch = "wasm32"))]
        Some(Some("convert-bert")) => convert::run(args),
        Some(Some("bench-bert")) => bench_bert::run(args),
        Some(_) => Err(Failure::input(format!(
            "unknown command {:?}; try `diffattn --help`",
            command.unwrap_or_default().to_string_lossy()
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            if let Some(message) = &failure.message {
                say(message);
            }
            ExitCode::from(failure.code)
        }
    }
}

/// Prints the help text.
fn help() -> Result<(), Failure> {
    write_stdout("the help", |out| out.write_all(HELP.as_bytes()))
}
